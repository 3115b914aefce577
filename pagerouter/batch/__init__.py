"""`pagerouter batch`: many inputs to OUTDIR, resumable, sharded, with progress and a summary.

    inputs.py   INPUT arguments (files, folders, globs, @list files) -> planned items, --shard I/N
    journal.py  the append-only, fsynced JSON-lines journal in OUTDIR and atomic output writes
    runner.py   bounded-concurrency conversion (in-process Converter, or the HTTP/gRPC clients)
    summary.py  the progress line and the end summary (also written as JSON into OUTDIR)
    command.py  the CLI wiring (`pagerouter batch`, registered by pagerouter/cli.py)

The invariant the journal keeps: a file counts as done only once its outputs are renamed into
place AND its record is fsynced, so a kill at any moment leaves either both or neither; a re-run
converts again whatever has no record (overwriting any half-renamed outputs) and skips the rest.
"""
