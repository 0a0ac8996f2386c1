# SPDX-License-Identifier: Apache-2.0
"""One request to a WSGI app in this process, without a server."""

import webob


def request(app, method, path, body=None, version='latest', **headers):
    headers.setdefault('X-Auth-Token', 'admin')
    headers['OpenStack-API-Version'] = 'placement ' + version
    req = webob.Request.blank(path, method=method, headers=headers)
    if body is not None:
        req.body = body.encode()
        req.content_type = 'application/json'
    return req.get_response(app)
