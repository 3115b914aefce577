"""Prices for `pagerouter bench` (pagerouter/bench/): cost per million pages from measured seconds.

Defaults are on-demand list prices as published by the cloud vendor at the time of writing;
they move, so set your own in YAML (`bench: {cpu_core_hour_usd: ..., gpu_hour_usd: ...}`).
"""

from pydantic import Field

from .base import StrictModel


class BenchConfig(StrictModel):
    cpu_core_hour_usd: float = Field(
        default=0.0446,
        ge=0,
        description="USD per CPU core (vCPU) hour. Default: AWS EC2 c7i.large on-demand, us-east-1, "
        "$0.0893/h for 2 vCPUs (aws.amazon.com/ec2/pricing/on-demand, 2025).",
    )
    gpu_hour_usd: float = Field(
        default=1.861,
        ge=0,
        description="USD per GPU hour, for tiers that ran on a GPU. Default: AWS EC2 g6e.xlarge (one NVIDIA "
        "L40S, the GPU olmOCR's published $176 per million pages assumes), on-demand, us-east-1 "
        "(aws.amazon.com/ec2/instance-types/g6e, 2025); the host's CPU is included in that price.",
    )
