# SPDX-License-Identifier: Apache-2.0
"""A body as the JSON bytes sent: one encoder for every answer, whether
the application writes it when it sends it or the candidate pipeline
writes it ahead to remember it."""

import json

import orjson


def json_bytes(body):
    """``body`` as JSON. orjson writes integers up to 64 bits; a larger
    one (a capacity with an allocation_ratio near 3.4e38) is written
    exactly by the standard library instead, as upstream writes it."""
    try:
        return orjson.dumps(body)
    except TypeError:
        return json.dumps(body, separators=(',', ':')).encode()
