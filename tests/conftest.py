"""Settings for the whole suite."""

from hypothesis import settings

# No deadlines: the machine is shared and `make test` runs a notebook worker beside the other
# tests, so a slow example says nothing about the code; every property is still checked.
settings.register_profile("leash", deadline=None)
settings.load_profile("leash")
