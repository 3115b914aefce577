"""The `pagerouter` command line: subcommands and their shared helpers."""
