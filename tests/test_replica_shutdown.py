"""Every replica that owns a pool or engines closes them when Serve shuts it down gracefully
(Serve 2.60 calls the deployment's `__del__` then; the collector may call it again later)."""

from __future__ import annotations

from pagerouter.config import PagerouterConfig


class FakeEngineSet:
    def __init__(self):
        self.closed = 0

    def close(self):
        self.closed += 1


def test_ingress_closes_the_isolation_pool_it_started():
    from pagerouter.deployments.ingress import IngressCore

    cfg = PagerouterConfig()
    cfg.serve.jobs.enabled = False
    core = IngressCore(cfg.model_dump(), None, None, None, None)
    core.__del__()  # nothing started yet: nothing to close
    pages = core.local_pages  # what the ingress's own triage of small requests starts
    assert pages.isolated and not pages._closed
    core.__del__()
    assert pages._closed
    core.__del__()  # a second call (the collector after Serve) is harmless


def test_stage_replicas_close_their_engines():
    from pagerouter.deployments.batched import SmallReader
    from pagerouter.deployments.large_reader import LargeReader

    cfg = PagerouterConfig().model_dump()
    for deployment, args in ((SmallReader, (cfg, False, False)), (LargeReader, (cfg, False))):
        replica = deployment.func_or_class(*args)  # eager=False: no model is loaded
        replica.engines = FakeEngineSet()
        replica.__del__()
        assert replica.engines.closed == 1, deployment.name


def test_triage_closes_its_isolation_pool():
    from pagerouter.deployments.triage import Triage

    class FakePageWork:
        closed = 0

        def close(self):
            self.closed += 1

    cls = Triage.func_or_class
    replica = cls.__new__(cls)  # its __init__ would start and warm real workers
    pages = replica.pages = FakePageWork()
    replica.__del__()
    replica.__del__()  # the collector after Serve: nothing left to close
    assert pages.closed == 1
