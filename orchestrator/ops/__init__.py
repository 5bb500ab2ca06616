"""Operating the fleet: the `celery -A orchestrator lifecycle ...` commands, Flower's
configuration, dead letters. Every command calls the same functions the API does."""
