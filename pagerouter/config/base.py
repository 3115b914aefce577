from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Base for every config section: unknown keys are errors; fields are documented."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
