"""OpenTelemetry traces of runs (the ``otel`` extra): ``OtelObserver``, and
``otlp_tracer_provider`` for ``swarm run --otel``.

Nothing here imports ``opentelemetry`` until it is used.
"""

from __future__ import annotations

from typing import Any

from swarm._dist import install_hint
from swarm.otel.observer import OtelObserver

__all__ = ["OtelObserver", "otlp_tracer_provider"]


def otlp_tracer_provider(service: str = "swarm") -> Any:
    """A ``TracerProvider`` exporting in batches over OTLP/HTTP to
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``; the
    exporter's default is ``http://localhost:4318``). Call its ``shutdown()`` at the end
    to send what is left. Raises ``ImportError`` naming the extra without OpenTelemetry."""
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise ImportError(f"OpenTelemetry is not installed: {install_hint('otel')}") from exc
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider
