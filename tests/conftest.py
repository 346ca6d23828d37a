"""Shared test configuration: hypothesis profiles (ci is the default, dev runs more), and a
query cache folder of the session's own."""

import atexit
import os
import shutil
import tempfile

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# checked queries cached by spaseq run (engine/language/cache.py) go to a folder of this test
# session, not the user's ~/.cache; subprocesses inherit it
os.environ["SPASEQ_QUERY_CACHE"] = tempfile.mkdtemp(prefix="spaseq-query-cache-")
atexit.register(shutil.rmtree, os.environ["SPASEQ_QUERY_CACHE"], ignore_errors=True)
