import sys
from pathlib import Path

# harness and fake_model sit beside the tests (this directory is not a package).
sys.path.insert(0, str(Path(__file__).resolve().parent))
