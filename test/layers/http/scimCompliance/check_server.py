"""Runs scim2-tester (a published SCIM 2.0 compliance checker) against a SCIM server and prints its results as JSON.

Usage: SCIM_URL=http://127.0.0.1:PORT/scim/v2 python check_server.py < token-on-stdin
The bearer token comes on standard input, never on the command line. One JSON object per check on stdout:
{"status", "title", "reason", "resource_type", "tags"}. Exits 0 when the checker ran (whatever it found).
"""

import json
import os
import sys

from httpx2 import Client
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import check_server

token = sys.stdin.read().strip()
url = os.environ["SCIM_URL"]
with Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
    client = SyncSCIMClient(http)
    client.discover()
    for result in check_server(client):
        print(
            json.dumps(
                {
                    "status": result.status.name,
                    "title": result.title,
                    "reason": result.reason,
                    "resource_type": result.resource_type,
                    "tags": sorted(result.tags),
                }
            ),
            flush=True,
        )
