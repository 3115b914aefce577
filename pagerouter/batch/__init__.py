"""`pagerouter batch`: many inputs to OUTDIR, resumable, sharded, with progress and a summary.

Every mode (`--local`, `--endpoint`, `--grpc`, `--ray`) plans, reads, skips, writes and words
its failures the same way:

    inputs.py    local INPUT arguments (files, folders, globs, @list files) -> `BatchItem`s, --shard I/N
    fsio.py      filesystem URIs (s3://, gs://, file://) through pyarrow, reading an input, and
                 OUTDIR (`Output`: local or remote; `write_document` writes a document's .md/.json)
    journal.py   the append-only, fsynced JSON-lines journal, its records, atomic writes, and the
                 one rule of what a rerun skips (`skip_statuses`)
    failures.py  one line per failed file, naming it
    runner.py    bounded-concurrency conversion (in-process Converter, or the HTTP/gRPC clients)
    summary.py   the progress line and the end summary (also written as JSON beside the journal)
    pagerouter/cli/batch.py  the CLI wiring (`pagerouter batch`, registered by pagerouter/cli/main.py)

`--ray` (Ray imported only inside functions, never by the core package's imports):
    ray_stages.py    the Ray Data UDFs: open, triage per page range, layout/reader/escalation actor pools
    ray_assembly.py  the driver's side: documents in page order, staged pages, journal, manifest rows
    ray_driver.py    connect, build the dataset, stream it into the assembler, summary and manifest
    early_pages.py   finished pages to the driver through a mailbox actor, ahead of the pools' queues

The invariant the journal keeps: a file counts as done only once its outputs are renamed into
place AND its record is fsynced, so a kill at any moment leaves either both or neither; a re-run
converts again whatever has no record (overwriting any half-renamed outputs) and skips the rest.
"""
