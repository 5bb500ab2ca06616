FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY pyproject.toml README.md beat_schedule.py ./
COPY orchestrator ./orchestrator
COPY workers ./workers
RUN pip install --no-cache-dir . && useradd --create-home lifecycle
USER lifecycle
CMD ["celery", "-A", "orchestrator", "worker", "-Q", "orchestrator", "-l", "INFO"]
