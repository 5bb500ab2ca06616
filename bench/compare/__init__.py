"""The fleet beside bare Celery (the floor) and a durable-workflow peer, in one run:
`python -m bench.compare`."""
