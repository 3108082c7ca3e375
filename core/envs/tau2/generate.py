from pathlib import Path


def generate_bundled(domain: str, seed: int, out_dir: Path) -> None:
    raise NotImplementedError
