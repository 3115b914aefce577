"""The wheel's packages: the core package `pagerouter`, and the serving folders `graph/`,
`deployments/` and `clients/` installed inside it as `pagerouter.graph`, `pagerouter.deployments`
and `pagerouter.clients`.

In the repository they stay top-level folders beside the core package (the layout every reader
of the project knows); installed, they live under the one name a user owns, so a wheel adds no
top-level `graph` or `clients` to site-packages to collide with another project's. A plain
checkout (no install) finds them the same way through `pagerouter/__init__.py`. Everything else
(metadata, extras, entry points) is in pyproject.toml; setuptools merges the two.
"""

from setuptools import find_packages, setup

SERVING_FOLDERS = ("graph", "deployments", "clients")  # as pagerouter.SERVING_FOLDERS (a build does not import what it builds)

setup(
    packages=find_packages(include=["pagerouter", "pagerouter.*"]) + [f"pagerouter.{name}" for name in SERVING_FOLDERS],
    package_dir={f"pagerouter.{name}": name for name in SERVING_FOLDERS},
)
