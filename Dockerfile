# The harness image: loadgen (the emulator included), the workloads and Locust.
# docker-compose.yml runs the emulator, the Locust master and its workers from it.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# The dependencies first, in their own layer, at the versions the project tests with
# (constraints.txt): a change to the code does not reinstall them.
COPY pyproject.toml README.md constraints.txt ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt -c constraints.txt

COPY loadgen ./loadgen
COPY workloads ./workloads
# Mapped into the package by pyproject.toml: the shipped designs and the dashboards' source.
COPY examples/designs ./examples/designs
COPY dashboards ./dashboards
RUN pip install --no-deps . \
    && useradd --create-home --uid 10001 loadgen

# Locust finds workloads/NAME.py relative to the working directory.
USER loadgen

# emulator, Locust web UI, Locust master, Prometheus metrics of the master
EXPOSE 8000 8089 5557 9646

CMD ["loadgen", "--help"]
