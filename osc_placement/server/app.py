# SPDX-License-Identifier: Apache-2.0
"""The WSGI application factory and its middleware, in upstream's order.

request id -> /healthcheck -> [metrics: /metrics, timing] ->
[osprofiler] -> proxy headers -> [CORS] ->
auth (noauth2 | keystone) -> context -> fault wrapper -> microversion ->
router -> handler.
"""

import http
import logging
import re
import time
import uuid

import orjson
from oslo_context import context
from oslo_middleware import cors as cors_middleware
from oslo_middleware import http_proxy_to_wsgi
from oslo_middleware import request_id as request_id_mod

from osc_placement.server.candidates import engine as candidate_engine
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import migration
from osc_placement.server.db import sync
from osc_placement.server import errors
from osc_placement.server import health
from osc_placement.server import http_api
from osc_placement.server import json_encoding
from osc_placement.server import metrics
from osc_placement.server import microversion
from osc_placement.server import policy
from osc_placement.server import profiling
from osc_placement.server import routes

LOG = logging.getLogger(__name__)
_JSON_HEADERS = ('Content-Type', 'application/json')
_REASONS = {s.value: '%d %s' % (s.value, s.phrase) for s in http.HTTPStatus}
_UNAUTHORIZED_BODY = orjson.dumps({
    'message': 'This server could not verify that you are authorized to '
               'access the document you requested. Either you supplied the '
               'wrong credentials (e.g., bad password), or your browser '
               'does not understand how to supply the credentials '
               'required.<br /><br />\n\n\n',
    'code': '401 Unauthorized', 'title': 'Unauthorized'})
_UNAUTHENTICATED_PATHS = ('/', '')


# Responses from this size on free what they were built from after they
# are sent (SentBody); smaller ones cost little to free.
HOLD_BYTES = 64 * 1024


class SentBody:
    """A response's bytes, holding the objects the answer was built from
    until the server has sent them and calls ``close()`` (PEP 3333; both
    granian and gunicorn call it after the last byte is written).

    Freeing a large answer (the body's dicts, the snapshot's objects)
    is work the client need not wait for; it is the same work, done
    after the response."""

    __slots__ = ('payload', 'held')

    def __init__(self, payload, held):
        self.payload = payload
        self.held = held

    def __iter__(self):
        return iter((self.payload,))

    def close(self):
        self.payload = self.held = None


class Router:
    """Matches PATH_INFO against the route table."""

    def __init__(self, table):
        self._static = {}
        self._patterns = []
        for template, steps in table:
            methods = {method: routes.chained(method_steps)
                       for method, method_steps in steps.items()}
            # The root's two spellings are one route in the metrics.
            route = (methods, template or '/')
            if '{' in template:
                regex = re.sub(r'\{(\w+)\}', r'(?P<\1>[^/]+)', template)
                self._patterns.append((re.compile(regex + '$'), route))
            else:
                self._static[template] = route

    def match(self, path):
        """(methods, url_vars, template), or (None, None, None) for an
        unknown path."""
        route = self._static.get(path)
        if route is not None:
            return route[0], {}, route[1]
        for regex, route in self._patterns:
            found = regex.match(path)
            if found:
                return route[0], found.groupdict(), route[1]
        return None, None, None

    def allowed(self, path):
        methods, _, _ = self.match(path)
        return list(methods or ())

    def template_of(self, path):
        """The route template ``path`` matches, or None."""
        return self.match(path)[2]


def _raised(err):
    """Errors upstream raises past the microversion layer: no vary."""
    err.vary = False
    return err


def _unauthorized(environ, start_response):
    """Upstream's bare WebOb 401: WebOb's own JSON document (not the
    errors list), or its HTML page or plain text as the client accepts."""
    kind = errors.representation(environ)
    if kind == errors.JSON_TYPE:
        content_type, body = _JSON_HEADERS[1], _UNAUTHORIZED_BODY
    else:
        content_type, body = errors.Unauthorized('').as_page(
            environ, html=kind is not None)
    start_response('401 Unauthorized', [
        ('Content-Type', content_type), ('Content-Length', str(len(body)))])
    return [body]


def _context_from(environ):
    """The caller's identity, from headers set by the auth layer."""
    user = environ.get('HTTP_X_USER_ID') or environ.get('HTTP_X_USER')
    if not user:
        return None
    project = (environ.get('HTTP_X_PROJECT_ID')
               or environ.get('HTTP_X_TENANT_ID')
               or environ.get('HTTP_X_TENANT'))
    roles = [r.strip().lower()
             for r in environ.get('HTTP_X_ROLES', '').split(',') if r.strip()]
    scope = environ.get('HTTP_OPENSTACK_SYSTEM_SCOPE')
    return policy.Context(user, project, roles, scope)


def _identify_in_logs(environ, caller):
    """Put the caller's user and project in the request's log lines."""
    log_context = environ.get(LOG_CONTEXT)
    if log_context is not None and caller is not None:
        log_context.user_id = caller.user_id
        log_context.project_id = caller.project_id


class PlacementApp:
    """Context, fault wrapper, microversion and routing in one callable,
    so the common path is a few function calls."""

    def __init__(self, conf, db, enforcer, candidates):
        self.conf = conf
        self.db = db
        self.enforcer = enforcer
        # What the candidate engine keeps between requests, for this
        # worker's database.
        self.candidates = candidates
        self.router = Router(routes.ROUTES)
        # What handlers count besides the request (candidates); None
        # with [metrics] enabled = false.
        self.metrics = (metrics.instruments() if conf.metrics.enabled
                        else None)

    def authorize(self, context, name, target=None):
        policy.authorize(self.enforcer, context, name, target)

    def __call__(self, environ, start_response):
        req = http_api.Request(environ)
        req.app = self
        req.context = _context_from(environ)
        # The raw PATH_INFO: the decoded one may not exist (not UTF-8).
        if req.context is None and environ.get('PATH_INFO') not in (
                _UNAUTHENTICATED_PATHS):
            return _unauthorized(environ, start_response)
        _identify_in_logs(environ, req.context)
        unavailable = None
        try:
            resp = self._dispatch(req)
        except errors.PlacementError as err:
            resp = self._error(req, err)
        except Exception as exc:
            if db_engine.is_unavailable(exc):
                unavailable = exc
            else:
                resp = self._internal_error(req, exc)
        if unavailable is not None:
            # Out of the except clause: oslo.log would append the
            # exception to the line again.
            resp = self._database_unavailable(req, unavailable)
        return self._send(req, resp, start_response)

    def _internal_error(self, req, exc):
        # The raw PATH_INFO: the decoded path may not exist.
        LOG.exception('Unexpected error in %s %r', req.method,
                      req.environ.get('PATH_INFO'))
        # WebOb's 500 template adds its explanation, as upstream's
        # fault wrapper does.
        return self._fault(req, errors.InternalServerError(str(exc)))

    def _fault(self, req, err):
        resp = self._error(req, err)
        # Upstream's fault wrapper sits outside the microversion layer.
        resp.version_header = False
        return resp

    def _database_unavailable(self, req, exc):
        """503 with Retry-After: the database is down, restarting or
        failing over, and the same request may well succeed later."""
        path = req.environ.get('PATH_INFO')
        request_id = req.environ.get('openstack.request_id')
        if isinstance(exc, db_engine.CommitOutcomeUnknown):
            LOG.error('Outcome unknown: the connection to the database '
                      'was lost during the COMMIT of %s %r (request %s, '
                      'consumers %s); the write may or may not have been '
                      'applied: %s',
                      req.method, path, request_id,
                      ', '.join(exc.consumers) or '-', health.describe(exc))
        else:
            LOG.warning('Database unavailable in %s %r (request %s): %s',
                        req.method, path, request_id, health.describe(exc))
        retry_after = self.conf.placement_database.unavailable_retry_after
        return self._fault(req, errors.database_unavailable(retry_after))

    def _dispatch(self, req):
        req.version = microversion.parse(
            req.environ.get(microversion.ENVIRON_HEADER))
        self._check_body_headers(req)
        http_api.check_request_text(req)
        methods, url_vars, template = self.router.match(req.path_info)
        if methods is None:
            raise http_api.not_found()
        req.environ[metrics.ROUTE_ENVIRON] = template
        handler = methods.get(req.method)
        if handler is None:
            raise errors.method_not_allowed(req.method, list(methods))
        req.url_vars = url_vars
        return handler(req)

    @staticmethod
    def _check_body_headers(req):
        length = req.environ.get('CONTENT_LENGTH')
        if not length:
            return
        try:
            length = int(length)
        except ValueError:
            raise _raised(errors.BadRequest(
                'content-length header must be an integer'))
        if length > 0 and not req.environ.get('CONTENT_TYPE'):
            raise _raised(errors.BadRequest(
                'content-type header required when content-length > 0'))

    @staticmethod
    def _error(req, err):
        """The error in the representation the client accepts."""
        headers = list(err.headers.items())
        if err.status == 409:
            req.environ[metrics.CONFLICT_CODE_ENVIRON] = err.code
        kind = errors.representation(req.environ)
        if req.method == 'HEAD':
            # WebOb answers HEAD with the bare error: no body, its
            # default content type.
            resp = http_api.Response(err.status, b'', headers,
                                     errors.HTML_TYPE)
        elif kind == errors.JSON_TYPE:
            with_code = (req.version is not None
                         and req.version.supports('error_codes'))
            body = err.as_dict(req.environ,
                               req.environ.get('openstack.request_id'),
                               with_code)
            resp = http_api.Response(err.status, body, headers)
        else:
            content_type, page = err.as_page(req.environ,
                                             html=kind is not None)
            resp = http_api.Response(err.status, page, headers, content_type)
        resp.vary = err.vary
        return resp

    @staticmethod
    def _send(req, resp, start_response):
        headers = resp.headers
        if req.version is not None and resp.version_header:
            headers.append(('openstack-api-version',
                            microversion.response_header(req.version)))
            if resp.vary:
                headers.append(('vary', 'openstack-api-version'))
        if resp.body is None:
            payload = b''
        elif resp.content_type is None:
            payload = json_encoding.json_bytes(resp.body)
            headers.append(_JSON_HEADERS)
        else:
            payload = resp.body
            headers.append(('Content-Type', resp.content_type))
        headers.append(('Content-Length', str(len(payload))))
        start_response(_REASONS[resp.status], headers)
        if len(payload) < HOLD_BYTES:
            return [payload]
        return SentBody(payload, (resp.body, resp.held))


def request_id_middleware(app):
    """Give every request and response an ``x-openstack-request-id``, keep
    a valid inbound global request id, make both the thread's logging
    context for the request, default a missing or ``*/*`` Accept to JSON
    (but for the health check's path), and write the access line."""
    def middleware(environ, start_response):
        received = time.monotonic()
        request_id = environ.get(request_id_mod.ENV_REQUEST_ID)
        if request_id is None:
            request_id = 'req-%s' % uuid.uuid4()
            environ[request_id_mod.ENV_REQUEST_ID] = request_id
        global_request_id = _global_request_id(environ)
        # oslo's healthcheck answers a client that accepts anything in
        # plain text, as in every other service.
        if (environ.get('HTTP_ACCEPT', '*/*') == '*/*'
                and environ.get('PATH_INFO') != health.PATH):
            environ['HTTP_ACCEPT'] = 'application/json'
        # Constructing it stores it as the thread's current context, where
        # oslo.log's formatter finds the ids for every line logged while
        # this request is served.
        log_context = context.RequestContext(
            request_id=request_id, global_request_id=global_request_id)
        environ[LOG_CONTEXT] = log_context

        started = {}

        def start(status, headers, exc_info=None):
            if not any(k.lower() == 'x-openstack-request-id'
                       for k, _ in headers):
                headers.append(('x-openstack-request-id', request_id))
            started.update(status=status, headers=headers)
            return start_response(status, headers, exc_info)
        try:
            body = app(environ, start)
        finally:
            # A line the thread logs between requests must not carry them.
            clear_log_context()
        if not LOG.isEnabledFor(logging.INFO):
            return body
        return LoggedWhenSent(body, lambda: _log_request(
            environ, started, log_context, received))
    return middleware


class LoggedWhenSent:
    """A response's iterable, and its access line, written when the
    server has sent the response and calls ``close()`` (PEP 3333): the
    client does not wait for oslo.log's formatting of the line."""

    __slots__ = ('_body', '_log')

    def __init__(self, body, log):
        self._body, self._log = body, log

    def __iter__(self):
        return iter(self._body)

    def close(self):
        log, self._log = self._log, None
        try:
            close = getattr(self._body, 'close', None)
            if close is not None:
                close()
        finally:
            if log is not None:
                log()


# The environ key holding the request's oslo.context (the logging one).
LOG_CONTEXT = 'osc_placement.log_context'


def clear_log_context():
    # oslo.context has no public way to unset the thread's context.
    context._request_store.context = None


def _global_request_id(environ):
    """The inbound ``X-OpenStack-Request-ID`` when it has the form
    ``req-<uuid>`` (oslo.middleware's check, as upstream), else None."""
    inbound = environ.get(_GLOBAL_HEADER_ENVIRON)
    if inbound and _GLOBAL_ID_FORMAT.match(inbound):
        environ[request_id_mod.GLOBAL_REQ_ID] = inbound
        return inbound
    # As oslo.middleware, an invalid one is dropped without a word.
    return None


_GLOBAL_HEADER_ENVIRON = 'HTTP_' + request_id_mod.INBOUND_HEADER.upper(
    ).replace('-', '_')
_GLOBAL_ID_FORMAT = re.compile(request_id_mod.ID_FORMAT)


def _log_request(environ, started, log_context, received):
    """Upstream's one INFO line per request, with the ids of
    ``log_context`` (written after the request, when the thread's own
    context is cleared); none if the response never started.

    Upstream's fields come first, unchanged, so that what matched them
    still does; then the seconds from ``received`` (the request reaching
    the application) to now (the response sent), and the client's
    User-Agent, quoted and escaped."""
    if 'status' not in started:
        return
    status, headers = started['status'], started['headers']
    found = {k.lower(): v for k, v in headers}
    uri = environ.get('SCRIPT_NAME', '') + environ.get('PATH_INFO', '')
    if environ.get('QUERY_STRING'):
        uri += '?' + environ['QUERY_STRING']
    LOG.info('%s "%s %s" status: %s len: %s microversion: %s '
             'time: %.6f agent: "%s"',
             environ.get('REMOTE_ADDR'), environ.get('REQUEST_METHOD'), uri,
             status.split(' ', 1)[0], found.get('content-length', 0),
             found.get('openstack-api-version', '-').replace(
                 'placement ', ''), time.monotonic() - received,
             _user_agent(environ), extra={'context': log_context})


# Quotes, backslashes and control characters of a User-Agent, escaped:
# the value stays one field of one line, whatever a client sends.
_AGENT_ESCAPES = {ord('"'): '\\"', ord('\\'): '\\\\'}
_AGENT_ESCAPES.update((code, '\\x%02x' % code)
                      for code in list(range(0x20)) + list(range(0x7f, 0xa0)))


def _user_agent(environ):
    agent = environ.get('HTTP_USER_AGENT')
    if not agent:
        return '-'
    return agent.translate(_AGENT_ESCAPES)


# The token a request without one stands for when
# ``[api] noauth_admin_without_token`` is on: noauth2's administrator.
TOKENLESS_ADMIN_TOKEN = 'admin'


def noauth_middleware(app, admin_without_token=False):
    """noauth2: token ``user[:project]``; ``admin`` gets the admin role;
    ``X-Roles`` overrides; system scope via ``OpenStack-System-Scope``.

    A request without a token is answered 401 (but for the root), or,
    with ``admin_without_token``, served as if its token were
    ``admin``."""
    def middleware(environ, start_response):
        token = environ.get('HTTP_X_AUTH_TOKEN')
        if token is None:
            if environ.get('PATH_INFO') == '/':
                return app(environ, start_response)
            if not admin_without_token:
                return _unauthorized(environ, start_response)
            token = TOKENLESS_ADMIN_TOKEN
            _read_bare_body_as_json(environ)
        user, _, project = token.partition(':')
        project = project or user
        if 'HTTP_X_ROLES' not in environ:
            environ['HTTP_X_ROLES'] = 'admin' if user == 'admin' else ''
        environ['HTTP_X_USER_ID'] = user
        if 'HTTP_OPENSTACK_SYSTEM_SCOPE' not in environ:
            environ['HTTP_X_TENANT_ID'] = project
        return app(environ, start_response)
    return middleware


def _read_bare_body_as_json(environ):
    """A body without a Content-Type is JSON: neutron-lib's NoAuthClient
    sends JSON (``null`` even on GET and DELETE) with none, which upstream
    refuses (400, or 415 on a write)."""
    if (environ.get('CONTENT_LENGTH', '0') not in ('', '0')
            and not environ.get('CONTENT_TYPE')):
        environ['CONTENT_TYPE'] = 'application/json'


def keystone_middleware(app, conf):
    """keystonemiddleware auth_token, bypassed for the root document."""
    from keystonemiddleware import auth_token
    protected = auth_token.AuthProtocol(
        app, {'oslo_config_config': conf, 'oslo_config_project': 'placement'})

    def middleware(environ, start_response):
        if environ.get('PATH_INFO') in _UNAUTHENTICATED_PATHS:
            return app(environ, start_response)
        return protected(environ, start_response)
    return middleware


def _cors(app, conf):
    if not conf.cors.allowed_origin:
        return app
    return cors_middleware.CORS(app, conf)


def init_database(conf):
    """Engine, optional schema upgrade, standard classes and traits."""
    db_conf = conf.placement_database
    if not db_conf.connection:
        raise ValueError('[placement_database] connection is required')
    engine = db_engine.create_engine(db_conf.connection, db_conf)
    db_engine.wait_for_database(engine, db_conf)
    if db_conf.sync_on_startup:
        migration.upgrade(engine)
    migration.require_current(engine)
    db = db_engine.Database(
        engine, conf.placement.allocation_conflict_retry_count)
    sync.sync_standards(db)
    return db


def make_app(conf, db=None, candidates=None):
    """The Placement WSGI application for a ConfigOpts (see conf.py);
    ``candidates``, the candidate_engine.CandidateEngine of ``db`` if
    the caller keeps it (a test), else a new one."""
    db = db or init_database(conf)
    candidates = candidates or candidate_engine.CandidateEngine()
    placement = PlacementApp(conf, db, policy.make_enforcer(conf),
                             candidates)
    if conf.api.auth_strategy == 'noauth2':
        app = noauth_middleware(
            placement, conf.api.noauth_admin_without_token)
    else:
        app = keystone_middleware(placement, conf)
    app = _cors(app, conf)
    if conf.oslo_middleware.enable_proxy_headers_parsing:
        app = http_proxy_to_wsgi.HTTPProxyToWSGI(app, conf)
    # Outside the proxy headers, as upstream has it.
    app = profiling.middleware(app, conf, db)
    # Outside authentication: /metrics needs no token, and a 401 is a
    # request too.
    app = metrics.measured(app, conf, db, placement.router.template_of)
    # Before the proxy headers are read: allowed_source_ranges is about
    # the peer that connected (a prober, or the proxy), and
    # ignore_proxied_requests about the headers a proxy added. Probes
    # are not counted among the API's requests.
    app = health.middleware(app, conf, db)
    return request_id_middleware(app)
