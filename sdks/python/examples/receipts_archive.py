"""Receipts that stay verifiable for years (docs/receipts.md): keep each receipt's full envelope, the gateway's JWKS and
a signed tree head of its transparency log; later, with nothing but those, verify each receipt and the chain, prove
each receipt is in the log, and prove the log only grew since the head you kept.

    GATEWAY_URL=https://relay.example GATEWAY_KEY_FILE=./gateway-key python examples/receipts_archive.py
"""

from __future__ import annotations

import os

import httpx

from privacy_relay import RelayClient, verify_chain_export, verify_consistency_proof, verify_inclusion_proof, verify_receipt

gateway_url = os.environ["GATEWAY_URL"]
model = os.environ.get("MODEL", "local-chat")

with RelayClient(gateway_url, api_key_file=os.environ["GATEWAY_KEY_FILE"], name_model="off") as client:
    # 1. What to store: every receipt whole (a bare jti cannot be verified), the JWKS, and a signed tree head.
    archive = []
    for question in ("What is a Merkle tree?", "And a consistency proof?", "Why keep a tree head?"):
        archive.append(client.chat.completions.create(model=model, messages=[{"role": "user", "content": question}]).receipt)
    jwks = httpx.get(f"{gateway_url}/api/.well-known/service-receipt-pubkeys.jwks").json()
    kept_head = client.rest.receipts.signed_tree_head()

    # 2. Later, offline: each receipt and the chain, with the stored JWKS (every key ever used stays in it).
    for receipt in archive:
        print(f"receipt {receipt['jti'][:8]} seq {receipt['chain']['seq']} verified: {verify_receipt(receipt, jwks).valid}")
    chain = verify_chain_export(archive, jwks)
    print(f"chain verified: {chain.valid} ({chain.chains[0].verified} receipts)")

    # 3. Online again: each receipt is in the transparency log, and the log only grew since the kept head.
    for receipt in archive:
        proof = client.rest.receipts.inclusion_proof(receipt["jti"])
        print(f"in the transparency log: {verify_inclusion_proof(proof, None, jwks, receipt=receipt).valid}")
    client.chat.completions.create(model=model, messages=[{"role": "user", "content": "One more."}])
    consistency = client.rest.receipts.consistency_proof(kept_head["tree_size"])
    grown = verify_consistency_proof(consistency, kept_head, jwks)
    print(f"log consistent since the kept head ({kept_head['tree_size']} -> {consistency['second']} leaves): {grown.valid}")
