# SPDX-License-Identifier: Apache-2.0
"""A stand-in for Nova's compute API, for benchmarks.nova_audit only.

It answers what ``osc_placement.compute`` reads and nothing else: the
version document of the endpoint, the four paged lists (servers,
migrations, hypervisors, flavors) at microversion 2.69, one server by
its id and the migrations of one server (``instance_uuid``), ``limit`` and
``marker`` as Nova takes them, at most ``MAX_LIMIT`` items a page
(Nova's ``[api] max_limit`` default) and a ``<member>_links`` next link
on a full page. Any other request, a lower microversion or a list asked
without the parameters the audit needs (``all_tenants``, ``is_public``)
is refused and remembered, so that the benchmark fails rather than time
a client that reads Nova wrongly. The tests never use it: they run the
verdicts on Nova's own answer shapes.

    stub = nova_stub.NovaStub(servers, migrations, hypervisors, flavors)
    server, endpoint = nova_stub.serve(stub)
"""

import collections
import json
import socketserver
import threading
import urllib.parse
from wsgiref import simple_server

PREFIX = '/v2.1'
MAX_LIMIT = 1000
# The highest microversion of Nova 2023.1 (Antelope); the audit asks 2.69.
MAX_VERSION = '2.95'
NEEDED_VERSION = (2, 69)
SERVER_PATH = '/servers/'
# path: (member, marker key, query parameters the audit must send).
LISTS = {
    '/servers/detail': ('servers', 'id', {'all_tenants': '1'}),
    '/os-migrations': ('migrations', 'uuid', {}),
    '/os-hypervisors/detail': ('hypervisors', 'id', {}),
    '/flavors/detail': ('flavors', 'id', {'is_public': 'None'}),
}


class Refused(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Missing(Exception):
    """Nova's 404 for a server it has not: an answer, not a refusal."""


class NovaStub:
    """The WSGI application; ``requests`` counts the answered requests by
    path and ``refused`` keeps what it would not answer."""

    def __init__(self, servers, migrations, hypervisors, flavors):
        items = {'/servers/detail': servers, '/os-migrations': migrations,
                 '/os-hypervisors/detail': hypervisors,
                 '/flavors/detail': flavors}
        self._items = items
        self._servers = {server['id']: server for server in servers}
        self._after = {path: {item[LISTS[path][1]]: index + 1
                              for index, item in enumerate(listed)}
                       for path, listed in items.items()}
        # Every run asks the same pages: each is encoded once.
        self._pages = {}
        self._lock = threading.Lock()
        self.requests = collections.Counter()
        self.refused = []

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO', '')
        query = urllib.parse.parse_qs(environ.get('QUERY_STRING', ''))
        try:
            body = self._answer(path, query, environ)
            status = '200 OK'
        except Missing as missing:
            body = json.dumps({'itemNotFound': {
                'code': 404, 'message': str(missing)}}).encode()
            status = '404 Not Found'
        except Refused as refused:
            with self._lock:
                self.refused.append('%s?%s: %s' % (
                    path, environ.get('QUERY_STRING', ''), refused))
            body = json.dumps({'badRequest': {
                'code': refused.status, 'message': str(refused)}}).encode()
            status = '%d Refused' % refused.status
        start_response(status, [
            ('Content-Type', 'application/json'),
            ('Content-Length', str(len(body))),
            ('OpenStack-API-Version', 'compute %d.%d' % NEEDED_VERSION)])
        return [body]

    def _answer(self, path, query, environ):
        if not path.startswith(PREFIX):
            raise Refused(404, 'not under %s' % PREFIX)
        path = path[len(PREFIX):]
        if path in ('', '/'):
            self._count('/')
            return json.dumps(version_document()).encode()
        asked = microversion(environ)
        if asked < NEEDED_VERSION:
            raise Refused(400, 'asked microversion %s, the audit needs '
                               '%d.%d' % ('.'.join(map(str, asked)),
                                          *NEEDED_VERSION))
        if path.startswith(SERVER_PATH) and path != '/servers/detail':
            return self._server(path[len(SERVER_PATH):])
        if path not in LISTS:
            raise Refused(404, 'not a list the audit reads')
        for name, value in LISTS[path][2].items():
            if query.get(name) != [value]:
                raise Refused(400, '%s=%s is missing' % (name, value))
        self._count(path)
        if path == '/os-migrations' and 'instance_uuid' in query:
            return self._migrations_of(_one(query, 'instance_uuid'))
        return self._page(path, _one(query, 'limit'), _one(query, 'marker'))

    def _server(self, uuid):
        self._count(SERVER_PATH + '{id}')
        server = self._servers.get(uuid)
        if server is None:
            raise Missing('Instance %s could not be found.' % uuid)
        return json.dumps({'server': server}).encode()

    def _migrations_of(self, server):
        """One page: a server has few migrations."""
        return json.dumps({'migrations': [
            migration for migration in self._items['/os-migrations']
            if migration['instance_uuid'] == server]}).encode()

    def _count(self, path):
        with self._lock:
            self.requests[path] += 1

    def _page(self, path, limit, marker):
        key = (path, limit, marker)
        page = self._pages.get(key)
        if page is None:
            page = self._pages[key] = json.dumps(
                self._build_page(path, limit, marker)).encode()
        return page

    def _build_page(self, path, limit, marker):
        member = LISTS[path][0]
        try:
            size = min(int(limit or MAX_LIMIT), MAX_LIMIT)
        except ValueError:
            raise Refused(400, 'limit %r is no number' % limit)
        start = 0
        if marker is not None:
            if marker not in self._after[path]:
                raise Refused(400, 'marker %s not found' % marker)
            start = self._after[path][marker]
        page = self._items[path][start:start + size]
        body = {member: page}
        if len(page) == size:
            body[member + '_links'] = [{'rel': 'next', 'href': '%s%s?%s' % (
                PREFIX, path, urllib.parse.urlencode(
                    {'limit': size, 'marker': page[-1][LISTS[path][1]]}))}]
        return body


def _one(query, name):
    values = query.get(name)
    return values[-1] if values else None


def microversion(environ):
    """The compute microversion asked, (2, 1) when none is."""
    header = environ.get('HTTP_OPENSTACK_API_VERSION', '')
    words = header.split()
    if len(words) == 2 and words[0] == 'compute':
        try:
            return tuple(int(part) for part in words[1].split('.'))
        except ValueError:
            pass
    return (2, 1)


def version_document():
    """What Nova's ``GET /v2.1/`` says of itself."""
    return {'version': {
        'id': 'v2.1', 'status': 'CURRENT', 'version': MAX_VERSION,
        'min_version': '2.1', 'updated': '2013-07-23T11:33:21Z',
        'links': [{'rel': 'self', 'href': PREFIX + '/'}],
        'media-types': [{'base': 'application/json',
                         'type': 'application/vnd.openstack.compute+json;'
                                 'version=2.1'}]}}


class _ThreadingServer(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


def serve(stub):
    """``(server, endpoint)``: ``stub`` served on a free loopback port by
    a thread of this process; ``server.shutdown()`` stops it."""
    server = simple_server.make_server(
        '127.0.0.1', 0, stub, server_class=_ThreadingServer,
        handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, 'http://127.0.0.1:%d%s' % (server.server_port, PREFIX)
