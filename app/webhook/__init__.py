"""The admission webhook: Katib's validating and mutating webhooks for Experiments and its pod
webhook (the metrics-collector sidecar), over HTTPS.

Layers, each a module, from the wire inwards:

* ``server``: HTTPS on aiohttp's low-level server and asyncio's TLS: accept, connection cap,
  graceful close; ``connection``: one connection's protocol, with its deadline;
* ``handler``: one request, with a bounded body, decided in a thread of its own;
* ``certs``: the serving certificate, re-read when ``tls.crt``/``tls.key`` change;
* ``routes``: one request to one reply, every refusal decided here (no sockets: the fuzz calls it);
* ``review``: the AdmissionReview ``admission.k8s.io/v1`` format, in and out;
* ``admission``: the Experiment decisions, made by the core (``core.validation``,
  ``core.defaults``), with what they need read through the ports (``lookups``: Namespace labels,
  katib-config, the stale PV read live) and the defaults answered as a JSON Patch (``patch``);
* ``pod``: the pod webhook: ``owners`` (is it a Trial's pod?), ``trial_view`` (the Trial's
  fields, checked), ``injection`` (Katib's steps), ``collector`` (the sidecar), ``wrap`` (the
  primary command);
* logs: ``app.common.logs.JsonLog``, the controller's JSON lines with an ``event`` name.

The webhook reaches the world only through ``core.ports.Cluster`` and ``ConfigSource``, so it runs
against any cluster: the tests use ``adapters.fake``, the command the live adapter.
"""

from katib_resume.app.common.logs import JsonLog
from katib_resume.app.webhook.admission import Admission
from katib_resume.app.webhook.certs import CertificateError
from katib_resume.app.webhook.routes import (
    HEALTHZ,
    MUTATE,
    MUTATE_POD,
    VALIDATE,
    Incoming,
    Reply,
    handle,
)
from katib_resume.app.webhook.server import Limits, WebhookServer, create_server

__all__ = [
    "HEALTHZ",
    "MUTATE",
    "MUTATE_POD",
    "VALIDATE",
    "Admission",
    "CertificateError",
    "Incoming",
    "JsonLog",
    "Limits",
    "Reply",
    "WebhookServer",
    "create_server",
    "handle",
]
