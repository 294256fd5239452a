"""The core package imports without torch or diffusers."""
import subprocess
import sys


def test_the_core_package_imports_without_torch_or_diffusers():
    code = ("import sys; import tensorfold; "
            "assert 'torch' not in sys.modules and 'diffusers' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)
