# What IDEs and type checkers see of the package root: `__init__.py` imports each name on first use.
from .config import PagerouterConfig as PagerouterConfig
from .config import load_config as load_config
from .convert import convert as convert
from .convert.converter import Converter as Converter
from .intake.inputs import InputError as InputError
from .model import Block as Block
from .model import Document as Document
from .model import Page as Page
from .render.output import to_json as to_json
from .render.output import to_markdown as to_markdown

__version__: str
__all__ = ["Block", "Converter", "Document", "InputError", "Page", "PagerouterConfig", "__version__", "convert", "load_config", "to_json", "to_markdown"]
