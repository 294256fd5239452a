"""TensorFold's engine from Python: MOSS-Image's prompt encoder and the FLUX.2 VAE, tensors by DLPack.

Importing needs neither torch nor diffusers; outputs are torch tensors when torch is installed,
numpy arrays otherwise (or as chosen by ``output=``). ``tensorfold.diffusers`` (imported on its own)
holds the diffusers drop-in ``AutoencoderKLFlux2``.
"""
from .encoder import PromptEncoder, Encoding
from .vae import VAE, VaeEncoding, to_pil

# tensorfold.MossImagePipeline (prompt -> picture, over src/pipelines/) will be exported here.

__all__ = ["PromptEncoder", "Encoding", "VAE", "VaeEncoding", "to_pil"]
__version__ = "0.1.0"
