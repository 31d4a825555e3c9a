"""One logical call to the gateway: retried on 429, 408, 5xx (not 501) and network errors, with exponential
backoff and full jitter, honouring Retry-After (a wait longer than 60 s is not made: the error goes to the
caller). Only idempotent reads and calls carrying an Idempotency-Key are retried."""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, Optional

import httpx

from .errors import ConnectionError, RateLimitError, RelayError, TimeoutError, error_from_answer, retry_after_seconds

MAX_RETRY_AFTER_SECONDS = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 8.0


def new_traceparent() -> str:
    """A W3C traceparent for a new trace."""
    return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"


def _retryable(status: int) -> bool:
    return status in (429, 408) or (status >= 500 and status != 501)


def _failure_of(error: httpx.HTTPError, timeout: float) -> RelayError:
    if isinstance(error, httpx.TimeoutException):
        return TimeoutError(f"The gateway did not answer within {timeout} s.", code="timeout")
    return ConnectionError(f"The gateway could not be reached: {error}", code="connection_error")


def _delay(policy: RetryPolicy, attempt: int, failure: RelayError, headers: Optional[Mapping[str, str]]) -> float:
    backoff = random.random() * min(policy.max_delay, policy.base_delay * 2 ** (attempt - 1))
    if isinstance(failure, RateLimitError):
        after = failure.retry_after_seconds
    else:
        after = retry_after_seconds(headers.get("retry-after")) if headers is not None else None
    return backoff if after is None else after


# unasync: generated
class Transport:
    def __init__(self, client: httpx.Client, policy: RetryPolicy, timeout: float, sleep: Callable[[float], None] = time.sleep) -> None:
        self.client = client
        self.policy = policy
        self.timeout = timeout
        self._sleep = sleep

    def send(
        self, method: str, url: str, *, headers: Mapping[str, str], content: Optional[bytes] = None, retry: bool = True, stream: bool = False, timeout: Optional[float] = None
    ) -> httpx.Response:
        """The first answer < 400 (left open when `stream`), or a RelayError."""
        limit = self.timeout if timeout is None else timeout
        attempts = self.policy.retries + 1 if retry else 1
        attempt = 1
        while True:
            answer_headers: Optional[httpx.Headers] = None
            try:
                request = self.client.build_request(method, url, headers=dict(headers), content=content, timeout=limit)
                response = self.client.send(request, stream=stream, follow_redirects=False)
            except httpx.HTTPError as error:
                failure = _failure_of(error, limit)
            else:
                if response.status_code < 400:
                    return response
                text = (response.read()).decode("utf-8", errors="replace")
                response.close()
                answer_headers = response.headers
                failure = error_from_answer(response.status_code, response.headers, text)
                if not _retryable(response.status_code):
                    raise failure
            if attempt >= attempts:
                raise failure
            wait = _delay(self.policy, attempt, failure, answer_headers)
            if wait > MAX_RETRY_AFTER_SECONDS:
                raise failure
            self._sleep(wait)
            attempt += 1
# unasync: end generated


# unasync: source
class AsyncTransport:
    def __init__(self, client: httpx.AsyncClient, policy: RetryPolicy, timeout: float, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.client = client
        self.policy = policy
        self.timeout = timeout
        self._sleep = sleep

    async def send(
        self, method: str, url: str, *, headers: Mapping[str, str], content: Optional[bytes] = None, retry: bool = True, stream: bool = False, timeout: Optional[float] = None
    ) -> httpx.Response:
        """The first answer < 400 (left open when `stream`), or a RelayError."""
        limit = self.timeout if timeout is None else timeout
        attempts = self.policy.retries + 1 if retry else 1
        attempt = 1
        while True:
            answer_headers: Optional[httpx.Headers] = None
            try:
                request = self.client.build_request(method, url, headers=dict(headers), content=content, timeout=limit)
                response = await self.client.send(request, stream=stream, follow_redirects=False)
            except httpx.HTTPError as error:
                failure = _failure_of(error, limit)
            else:
                if response.status_code < 400:
                    return response
                text = (await response.aread()).decode("utf-8", errors="replace")
                await response.aclose()
                answer_headers = response.headers
                failure = error_from_answer(response.status_code, response.headers, text)
                if not _retryable(response.status_code):
                    raise failure
            if attempt >= attempts:
                raise failure
            wait = _delay(self.policy, attempt, failure, answer_headers)
            if wait > MAX_RETRY_AFTER_SECONDS:
                raise failure
            await self._sleep(wait)
            attempt += 1
# unasync: end source


def json_of(text: str) -> Any:
    import json

    return {} if text == "" else json.loads(text)
