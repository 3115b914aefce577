"""Asynchronous jobs for long documents: a file-backed store and a scheduler, without Ray."""

from .runner import JobScheduler, job_document, owner_tag
from .store import FINISHED, JobNotFound, JobStatus, JobStore, LeaseLost, page_numbers_text

__all__ = ["FINISHED", "JobNotFound", "JobScheduler", "JobStatus", "JobStore", "LeaseLost", "job_document",
           "owner_tag", "page_numbers_text"]
