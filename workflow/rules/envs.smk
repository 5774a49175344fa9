# Conda environments of the rules (paths relative to workflow/rules/), pinned like
# requirements.lock (tests/workflow/test_envs.py).
CORE_ENV = "../../envs/core.yaml"
IMAGE_ENV = "../../envs/images.yaml"
AUDIO_ENV = "../../envs/audio.yaml"
