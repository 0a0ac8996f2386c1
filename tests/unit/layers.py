# SPDX-License-Identifier: Apache-2.0
"""The layers of osc_placement, top to bottom: the one declaration that
test_layers.py enforces and that architecture.rst's layer list shows.

A module may import modules of the layers below its own on its side, and
modules of its own layer only where ``within`` is True, never the modules
its layer ``bars`` (ours or a library's). The client and the server are
two sides that never import each other; both import the shared side, the
vocabulary they speak, which imports neither. A name ending in ``.*``
stands for every module of that package, at any depth.
"""

import collections

Layer = collections.namedtuple('Layer', 'name within modules bars',
                               defaults=((),))

CLIENT = (
    Layer('entry', True, (
        'osc_placement', 'osc_placement.shell', 'osc_placement.plugin')),
    Layer('commands', True, (
        'osc_placement.resources', 'osc_placement.resources.*')),
    Layer('remote', True, (
        'osc_placement.compute', 'osc_placement.http')),
    Layer('rules', True, (
        'osc_placement.audit', 'osc_placement.explain',
        'osc_placement.flavor_request', 'osc_placement.provider_rules')),
    Layer('vocabulary', False, ('osc_placement.version',)),
    Layer('seams', False, ('osc_placement.library_seams',)),
)

SERVER = (
    Layer('entry', True, (
        'osc_placement.server', 'osc_placement.server.__main__',
        'osc_placement.server.launcher', 'osc_placement.server.cmd',
        'osc_placement.server.manage', 'osc_placement.server.status',
        'osc_placement.server.wsgi_app', 'osc_placement.server.fixture')),
    Layer('serving', False, ('osc_placement.server.http_server',)),
    Layer('application', False, ('osc_placement.server.app',)),
    Layer('policy', False, ('osc_placement.server.policy',)),
    Layer('configuration', False, ('osc_placement.server.conf',)),
    Layer('middleware', False, (
        'osc_placement.server.health', 'osc_placement.server.metrics',
        'osc_placement.server.profiling')),
    Layer('routing', False, ('osc_placement.server.routes',)),
    # Handlers reach the database only through objects.
    Layer('handlers', True, (
        'osc_placement.server.handlers', 'osc_placement.server.handlers.*'),
        bars=('osc_placement.server.db', 'osc_placement.server.db.*',
              'sqlalchemy', 'sqlalchemy.*')),
    Layer('http', False, ('osc_placement.server.http_api',)),
    # The candidate engine: above the objects whose names it checks, with
    # SQL of its own.
    Layer('candidates', True, (
        'osc_placement.server.candidates',
        'osc_placement.server.candidates.*')),
    Layer('objects', True, (
        'osc_placement.server.objects', 'osc_placement.server.objects.*')),
    Layer('schemas', True, (
        'osc_placement.server.schemas', 'osc_placement.server.schemas.*')),
    Layer('db', True, (
        'osc_placement.server.db', 'osc_placement.server.db.*')),
    Layer('vocabulary', False, ('osc_placement.server.microversion',)),
    Layer('base', False, (
        'osc_placement.server.errors', 'osc_placement.server.json_encoding',
        'osc_placement.server.log_format')),
)

# Below both sides: data either may import, importing nothing of either.
SHARED = (
    Layer('vocabulary', False, ('osc_placement.microversions',)),
)

# Each side, with the directory its module paths are shown relative to.
SIDES = (('client', 'osc_placement', CLIENT),
         ('server', 'osc_placement.server', SERVER),
         ('shared', 'osc_placement', SHARED))
# The side every other side may import.
SHARED_SIDE = 'shared'
