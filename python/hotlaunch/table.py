"""`python -m hotlaunch.table DIR/sweep.csv [OUT.parquet]`: the CLI sweep's table as Parquet.

The Rust CLI writes CSV only (to keep its build light); this writes the Parquet copy with
pyarrow, next to the CSV by default."""

import sys

from . import write_parquet


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print("usage: python -m hotlaunch.table SWEEP.csv [OUT.parquet]", file=sys.stderr)
        return 2
    src = argv[0]
    out = argv[1] if len(argv) == 2 else (src[:-4] if src.endswith(".csv") else src) + ".parquet"
    print(f"wrote {write_parquet(src, out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
