# katib-resume: one image for its binaries (`katib-resume controller`, `webhook`, `suggestion-server`).
# Build: docker build -t katib-resume:0.1.0 .   (the tag `katib-resume manifests` uses by default)
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Only what the package needs (see .dockerignore); pip compiles the bytecode at install time,
# so nothing is written at run time and the root filesystem can be read-only.
WORKDIR /src
COPY pyproject.toml README.md ./
COPY katib_resume ./katib_resume
COPY core ./core
COPY adapters ./adapters
COPY app ./app
RUN pip install . && rm -rf /src

# A fixed numeric non-root user: the manifests run the pods as 10001 with runAsNonRoot.
RUN groupadd --system --gid 10001 katib \
    && useradd --system --uid 10001 --gid 10001 --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin katib
USER 10001:10001
WORKDIR /tmp

ENTRYPOINT ["katib-resume"]
CMD ["--help"]
