"""Privacy Relay SDK: on-device tokenisation, attestation and detokenisation for LLM calls through a content-blind
gateway, the gateway's REST capability set, and offline verification of receipts and webhooks."""

from .async_client import AsyncRelayClient, AsyncRelayStream
from .attestation import EngineIdentity
from .client import RelayClient, RelayStream
from .conversation import AsyncConversation, AsyncConversationStream, Conversation, ConversationStream
from .engine import ENGINE
from .errors import (
    AuthenticationError,
    ConfigurationError,
    ConflictError,
    ConnectionError,
    EgressPolicyError,
    GatewayIdentityError,
    InsufficientBalanceError,
    InvalidRequestError,
    NameModelUnavailableError,
    NestingTooDeepError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    PretokenisationRequiredError,
    RateLimitError,
    RelayError,
    ServerError,
    StreamError,
    TimeoutError,
    UnsupportedContentError,
    UnsupportedFieldError,
)
from .verify.chain import verify_chain, verify_chain_export
from .verify.jwks import JwksCache, JwksError, create_jwks_cache, fetch_jwks
from .verify.receipt import VerificationCheck, VerificationResult, verify_receipt
from .verify.transparency import verify_consistency_proof, verify_inclusion_proof
from .verify.webhook import WebhookDeduper, WebhookVerificationError, verify_webhook
from .version import VERSION as __version__

__all__ = [
    "AsyncConversation", "AsyncConversationStream", "AsyncRelayClient", "AsyncRelayStream", "AuthenticationError", "ConfigurationError", "ConflictError", "ConnectionError", "Conversation", "ConversationStream",
    "ENGINE", "EgressPolicyError", "EngineIdentity", "GatewayIdentityError", "InsufficientBalanceError", "InvalidRequestError", "JwksCache", "JwksError",
    "NameModelUnavailableError", "NestingTooDeepError", "NotFoundError", "PayloadTooLargeError", "PermissionDeniedError", "PretokenisationRequiredError",
    "RateLimitError", "RelayClient", "RelayError", "RelayStream", "ServerError", "StreamError", "TimeoutError", "UnsupportedContentError", "UnsupportedFieldError", "VerificationCheck",
    "VerificationResult", "WebhookDeduper", "WebhookVerificationError", "__version__", "verify_chain", "verify_chain_export", "verify_consistency_proof", "verify_inclusion_proof",
    "verify_receipt", "verify_webhook", "create_jwks_cache", "fetch_jwks",
]
