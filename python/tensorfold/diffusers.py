"""tensorfold.diffusers.AutoencoderKLFlux2: a drop-in for diffusers' AutoencoderKLFlux2 whose encode and
decode run on the engine. It loads the same folder (config.json, the batch-norm statistics as the
buffers ``bn.running_mean`` / ``bn.running_var``); ``encode(x).latent_dist`` is diffusers' own
DiagonalGaussianDistribution over the engine's moments, ``decode(z, return_dict=False)[0]`` the
picture tensor. Needs torch and diffusers (imported with this module, not with tensorfold).
"""
import math
import os
from typing import Optional, Tuple

import torch
from diffusers import ConfigMixin, ModelMixin
from diffusers.configuration_utils import register_to_config
from diffusers.models.autoencoders.vae import DecoderOutput, DiagonalGaussianDistribution
from diffusers.models.modeling_outputs import AutoencoderKLOutput

from .vae import VAE


class AutoencoderKLFlux2(ModelMixin, ConfigMixin):
    config_name = "config.json"

    # the same configuration as diffusers' class, so its config.json loads and saves unchanged
    @register_to_config
    def __init__(
        self,
        in_channels: int = 3,
        out_channels: int = 3,
        down_block_types: Tuple[str, ...] = ("DownEncoderBlock2D",) * 4,
        up_block_types: Tuple[str, ...] = ("UpDecoderBlock2D",) * 4,
        block_out_channels: Tuple[int, ...] = (128, 256, 512, 512),
        decoder_block_out_channels: Optional[Tuple[int, ...]] = None,
        layers_per_block: int = 2,
        act_fn: str = "silu",
        latent_channels: int = 32,
        norm_num_groups: int = 32,
        sample_size: int = 1024,
        use_quant_conv: bool = True,
        use_post_quant_conv: bool = True,
        mid_block_add_attention: bool = True,
        batch_norm_eps: float = 1e-4,
        batch_norm_momentum: float = 0.1,
        patch_size: Tuple[int, int] = (2, 2),
    ):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(math.prod(patch_size) * latent_channels, eps=batch_norm_eps,
                                       momentum=batch_norm_momentum, affine=False, track_running_stats=True)
        self.use_slicing = False
        self.use_tiling = False
        self._engine = None

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, subfolder: Optional[str] = None, device: str = "cpu",
                        torch_dtype=None, **kwargs):
        """A local folder: the VAE's own, or a pipeline folder with ``subfolder="vae"`` (found without
        it too). ``device``: where the engine computes ("cpu" or "cuda"); with "cuda", CUDA tensors are
        read in place and the outputs are CUDA tensors (CPU tensors in, CPU tensors out either way).
        Weights are used as published (bf16 values, fp32-class activations): torch_dtype may only be
        float32 or None. Other diffusers loading options are not supported and are refused."""
        if kwargs:
            raise ValueError(f"from_pretrained: unsupported options {sorted(kwargs)}")
        if torch_dtype not in (None, torch.float32):
            raise ValueError(f"torch_dtype: the engine's VAE takes and returns float32, got {torch_dtype}")
        path = os.fspath(pretrained_model_name_or_path)
        if subfolder:
            path = os.path.join(path, subfolder)
        elif not os.path.isfile(os.path.join(path, cls.config_name)) and os.path.isdir(os.path.join(path, "vae")):
            path = os.path.join(path, "vae")
        engine = VAE.from_pretrained(path, device=device, output="torch")
        model = cls.from_config(cls.load_config(path))
        model._engine = engine
        with torch.no_grad():
            model.bn.running_mean.copy_(torch.tensor(engine.config["bn_mean"], dtype=torch.float32))
            model.bn.running_var.copy_(torch.tensor(engine.config["bn_var"], dtype=torch.float32))
        return model.eval()

    def _require_engine(self):
        if self._engine is None:
            raise RuntimeError("AutoencoderKLFlux2: load it with from_pretrained(folder); it has no weights of its own")
        return self._engine

    def encode(self, x: torch.Tensor, return_dict: bool = True):
        """x: float32 [B, 3, H, W] in [-1, 1], C-contiguous (on the CPU, or the GPU with device="cuda")."""
        posterior = DiagonalGaussianDistribution(self._require_engine().moments(x))
        return AutoencoderKLOutput(latent_dist=posterior) if return_dict else (posterior,)

    def decode(self, z: torch.Tensor, return_dict: bool = True, generator=None):
        """z: float32 [B, Cz, h, w], C-contiguous (where x may be) -> pictures float32 [B, 3, 8h, 8w] beside it."""
        dec = self._require_engine().decode(z)
        return DecoderOutput(sample=dec) if return_dict else (dec,)

    def forward(self, sample: torch.Tensor, sample_posterior: bool = False, return_dict: bool = True,
                generator: Optional[torch.Generator] = None):
        posterior = self.encode(sample).latent_dist
        z = posterior.sample(generator=generator) if sample_posterior else posterior.mode()
        dec = self.decode(z.contiguous()).sample
        return DecoderOutput(sample=dec) if return_dict else (dec,)
