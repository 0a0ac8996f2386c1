# SPDX-License-Identifier: Apache-2.0
"""GET / : the version document."""

from osc_placement.server.handlers import common
from osc_placement.server import http_api
from osc_placement.server import microversion


def home(req):
    body = {'versions': [{
        'id': 'v' + str(microversion.MIN_VERSION),
        'max_version': str(microversion.MAX_VERSION),
        'min_version': str(microversion.MIN_VERSION),
        'status': 'CURRENT',
        'links': [{'rel': 'self', 'href': ''}],
    }]}
    return http_api.cached(req, http_api.Response(200, body), common.now())
