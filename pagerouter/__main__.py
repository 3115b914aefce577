"""`python -m pagerouter`: the `pagerouter` command, for environments whose scripts folder is not
on PATH (a notebook's kernel, `python -m` in CI)."""

from pagerouter.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
