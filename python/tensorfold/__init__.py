"""TensorFold's engine from Python: MOSS-Image's prompt encoder, the FLUX.2 VAE and the whole
pipeline, tensors by DLPack.

Importing needs neither torch nor diffusers; outputs are torch tensors when torch is installed,
numpy arrays otherwise (or as chosen by ``output=``). ``tensorfold.diffusers`` (imported on its own)
holds the diffusers drop-in ``AutoencoderKLFlux2``.
"""
from .encoder import PromptEncoder, Encoding
from .vae import VAE, VaeEncoding, to_pil
from .pipeline import MossImagePipeline

__all__ = ["PromptEncoder", "Encoding", "VAE", "VaeEncoding", "to_pil", "MossImagePipeline"]
__version__ = "0.1.0"
