# SPDX-License-Identifier: Apache-2.0
"""Upstream Placement 16.0.0 and our server behind a real Keystone, on one
database: the sides of tests/compat with ``[api] auth_strategy =
keystone`` and a ``[keystone_authtoken]`` section naming the Keystone of
``identity.Keystone``, and a client that sends real tokens."""

import json
import urllib.error
import urllib.request

from tests.compat import upstream


def write_keystone_conf(side, keystone):
    """The side's placement.conf: its database, keystone auth."""
    with open(side.conf_path, 'w') as f:
        f.write('[DEFAULT]\ndebug = False\n\n'
                '[api]\nauth_strategy = keystone\n\n'
                '[placement_database]\nconnection = %s\n\n' % side.db_url)
        f.write(keystone.authtoken_section())


class Upstream(upstream.Upstream):

    def __init__(self, db_url, keystone):
        super().__init__(db_url)
        write_keystone_conf(self, keystone)


class Ours(upstream.Ours):

    def __init__(self, db_url, keystone):
        super().__init__(db_url)
        write_keystone_conf(self, keystone)


def request(base, method, path, token=None, service_token=None, body=None,
            version='1.39'):
    """(status, decoded JSON body or text) of one request to a Placement
    at ``base`` with these tokens."""
    headers = {'Accept': 'application/json',
               'OpenStack-API-Version': 'placement %s' % version}
    if token:
        headers['X-Auth-Token'] = token
    if service_token:
        headers['X-Service-Token'] = service_token
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers['Content-Type'] = 'application/json'
    req = urllib.request.Request(base + path, data=data, headers=headers,
                                 method=method)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, _decoded(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, _decoded(exc.read())


def _decoded(raw):
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors='replace')


def error_texts(body):
    """The parts of an error body both sides must share: each error's
    status, title, detail and code, without its request id."""
    if not isinstance(body, dict) or 'errors' not in body:
        return body
    keys = ('status', 'title', 'detail', 'code')
    return [{key: error.get(key) for key in keys}
            for error in body['errors']]
