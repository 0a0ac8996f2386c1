# SPDX-License-Identifier: Apache-2.0
"""The HTTP layer: microversion negotiation and error translation.

Every request goes through ``SessionClient.request``. It adds the
microversion and Accept headers, sends the request through the
keystoneauth1 session (which handles auth, the catalogue and request ids),
and turns failures into osc-lib exceptions whose text is one readable line.
"""

import json
import logging
import re

from keystoneauth1 import exceptions as ks_exc
from osc_lib import exceptions as osc_exc

from osc_placement import version

LOG = logging.getLogger(__name__)

API_VERSION_HEADER = 'OpenStack-API-Version'
SERVICE_TYPE = 'placement'

# The loggers keystoneauth1 logs requests and responses to: one, or four
# when the session splits them (``split-loggers`` in clouds.yaml).
WIRE_LOGGERS = ('keystoneauth.session', 'keystoneauth.session.request',
                'keystoneauth.session.response', 'keystoneauth.session.body',
                'keystoneauth.session.request-id')

# 4xx statuses with an osc-lib exception of their own, as upstream maps them.
_EXCEPTION_BY_STATUS = {
    cls.http_status: cls
    for cls in (osc_exc.BadRequest, osc_exc.Unauthorized, osc_exc.Forbidden,
                osc_exc.NotFound, osc_exc.Conflict, osc_exc.OverLimit)
}


class SessionClient:
    """Placement requests over a keystoneauth1 session.

    ``api_version`` is either a microversion or '1', meaning negotiate.
    Negotiation happens on first use of :attr:`api_version`, not when the
    client is built, so parsers and ``--help`` never touch the network.
    """

    def __init__(self, session, ks_filter, api_version='1'):
        self.session = session
        self.ks_filter = ks_filter
        self._requested_version = api_version
        self._negotiated_version = None
        self._ceiling = None
        self._lean = None

    @property
    def api_version(self):
        if self._requested_version not in version.NEGOTIATE_VERSIONS:
            return self._requested_version
        if self._negotiated_version is None:
            self._negotiated_version = self._negotiate()
        if self._ceiling is None:
            return self._negotiated_version
        return version.lowest(self._negotiated_version, self._ceiling)

    @property
    def negotiating(self):
        """True when the user left the version to negotiation."""
        return self._requested_version in version.NEGOTIATE_VERSIONS

    def limit_negotiated_version(self, ceiling):
        """Negotiate at most ``ceiling``; an explicit version stays as is."""
        self._ceiling = ceiling

    def request(self, method, url, **kwargs):
        """Send a request at the client's microversion; return the response.

        ``version`` overrides the microversion for this one call. A plain
        GET goes the lean way when it can (see ``LeanGets``).
        """
        microversion = kwargs.pop('version', None) or self.api_version
        if method == 'GET' and set(kwargs) <= {'params'}:
            response = self._lean_gets().get(url, kwargs.get('params'),
                                             self._headers(microversion))
            if response is not None:
                return response
        return self._send(method, url, microversion, **kwargs)

    def _lean_gets(self):
        if self._lean is None:
            self._lean = LeanGets(self.session, self.ks_filter)
        return self._lean

    @staticmethod
    def _headers(microversion):
        return {API_VERSION_HEADER: 'placement %s' % microversion,
                'Accept': 'application/json'}

    def _send(self, method, url, microversion, **kwargs):
        headers = kwargs.pop('headers', {})
        headers.setdefault(API_VERSION_HEADER, 'placement %s' % microversion)
        headers.setdefault('Accept', 'application/json')
        with translated_errors(self._endpoint_hint()):
            return self.session.request(url, method, headers=headers,
                                        endpoint_filter=self.ks_filter,
                                        log=wire_log_shown(), **kwargs)

    def _negotiate(self):
        """Ask the root document at our maximum; settle on what both speak.

        A server that speaks our maximum answers 200. An older one answers
        406 with its own ``max_version``. Anything else (a proxy's 404, a
        server error) tells us nothing, so we keep our maximum and let the
        command's own request report the real problem.
        """
        response = self._send('GET', '/', version.MAX_VERSION,
                              raise_exc=False)
        if response.status_code != 406:
            return version.MAX_VERSION
        server_max = _server_max_version(response)
        LOG.debug('Microversion %s not supported in server. Falling back to '
                  'microversion %s', version.MAX_VERSION, server_max)
        return server_max

    def _endpoint_hint(self):
        """The endpoint, for connection errors; None if it cannot be known."""
        try:
            return self.session.get_endpoint(**self.ks_filter)
        except Exception:  # auth or catalogue problems surface elsewhere
            return None


def wire_log_shown():
    """Whether keystoneauth1's debug wire log would reach a handler: its
    record serialises the body again, so it is built only when printed."""
    return any(_debug_reaches_a_handler(logging.getLogger(name))
               for name in WIRE_LOGGERS)


def _debug_reaches_a_handler(logger):
    if not logger.isEnabledFor(logging.DEBUG):
        return False
    while logger is not None:
        if any(handler.level <= logging.DEBUG
               for handler in logger.handlers):
            return True
        if not logger.propagate:
            return False
        logger = logger.parent
    # No handler at all: logging's last resort prints warnings only.
    return False


def _server_max_version(response):
    """The usable maximum from a 406 body, capped at ours; our minimum if
    absent."""
    try:
        advertised = response.json()['errors'][0]['max_version']
        server_max = version.parse(advertised)
    except (ValueError, KeyError, IndexError, TypeError):
        return version.MIN_VERSION
    return version.lowest(server_max, version.MAX_VERSION)


class translated_errors:
    """Turn keystoneauth failures into one-line osc-lib exceptions."""

    def __init__(self, endpoint=None):
        self.endpoint = endpoint

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None:
            return False
        if isinstance(exc, ks_exc.HttpError):
            raise http_error_to_exception(exc) from exc
        if isinstance(exc, ks_exc.ConnectionError):
            raise osc_exc.CommandError(
                connection_error_message(exc, self.endpoint)) from exc
        return False


def http_error_to_exception(exc):
    status = exc.http_status
    detail = error_detail(exc.response)
    suffix = request_id_suffix(exc)
    if 400 <= status < 500:
        cls = _TRACED_BY_STATUS.get(status)
        if cls is not None:
            error = cls(status, detail)
            error.trace = suffix
            return error
        return osc_exc.CommandError('%s (HTTP %s)%s'
                                    % (detail, status, suffix))
    return osc_exc.CommandError(
        'Placement server error: %s (HTTP %s)%s' % (detail, status, suffix))


# --- Request ids at the end of an error, to find it in the server's log.

def request_id_suffix(exc):
    """`` (Request-ID: req-...)`` from the failed request's
    ``x-openstack-request-id``, or '' when the server sent none."""
    request_id = getattr(exc, 'request_id', None)
    return ' (Request-ID: %s)' % request_id if request_id else ''


class _TracedError:
    """An osc-lib ``ClientException`` whose text is upstream's
    (``<detail> (HTTP 404)``) followed by the request id suffix
    (``trace``) and by a ``hint`` a command may add."""

    trace = ''
    hint = ''

    def __str__(self):
        return '%s%s%s' % (super().__str__(), self.trace, self.hint)


# The classes of _EXCEPTION_BY_STATUS, traced; each still is its osc-lib
# class, so ``except NotFound`` goes on working.
_TRACED_BY_STATUS = {
    status: type(cls.__name__, (_TracedError, cls), {})
    for status, cls in _EXCEPTION_BY_STATUS.items()
}


def error_detail(response):
    """The last line of ``errors[0].detail``, as upstream prints it.

    Bodies that are not Placement's JSON errors (a proxy's HTML page, an
    empty body) fall back to the first non-empty line of text, then to the
    reason phrase, so the user always gets something readable.
    """
    if response is None:
        return 'no response'
    try:
        detail = response.json()['errors'][0]['detail']
        return str(detail).strip().split('\n')[-1].strip()
    except (ValueError, KeyError, IndexError, TypeError,
            json.JSONDecodeError):
        pass
    for line in (response.text or '').splitlines():
        if line.strip():
            return line.strip()[:200]
    return response.reason or 'unknown error'


# urllib3 buries the useful part ("Connection refused", "Name or service
# not known") deep inside nested reprs; this digs it out.
_ERRNO_REASON = re.compile(r'\[Errno -?\d+\] ([^"\')\]]+)')


def connection_error_message(exc, endpoint):
    where = ' at %s' % endpoint if endpoint else ''
    if isinstance(exc, ks_exc.ConnectTimeout):
        return 'The Placement service%s timed out' % where
    text = str(exc).strip()
    match = _ERRNO_REASON.search(text)
    reason = match.group(1).strip() if match else text.split('\n')[0]
    message = 'The Placement service%s could not be reached' % where
    return '%s: %s' % (message, reason) if reason else message


# --- The lean way for GETs (commands that read thousands of providers).

class LeanGets:
    """Plain GETs sent over kept-alive ``http.client`` connections.

    For a command that reads every provider, the session's per-request
    machinery (adapters, hooks, cookie jars, logging) is the client's
    bottleneck. The endpoint is resolved once; the auth headers are
    asked of the session for every request, so a token is still renewed.

    ``get`` returns None, and the caller uses the session instead, with
    the wire log shown, a proxy, no endpoint or auth headers, a 401 or a
    redirect (the session's to handle), or a failed connection. Any other
    error status raises what the session's path raises.
    """

    def __init__(self, session, ks_filter):
        import threading
        self.session = session
        self.ks_filter = ks_filter
        self._lock = threading.Lock()
        self._target = None
        self._idle = []

    def get(self, url, params, headers):
        if url.startswith(('http://', 'https://')) or wire_log_shown():
            return None
        target = self._resolved()
        if not target:
            return None
        try:
            headers = dict(headers, **self.session.get_auth_headers())
        except Exception:  # let the session report its auth problems
            return None
        headers.update(target['headers'])
        try:
            path = _quoted(target['prefix'] + '/' + url.lstrip('/')) \
                + _query(params)
        except ValueError:  # text requests would refuse too, or quote
            return None
        answer = self._send(target, path, headers)
        if answer is None:
            # This request failed this way: the session sends it again and
            # says why if it fails there too.
            return None
        answer.url = target['base'] + path
        if 200 <= answer.status_code < 300:
            return answer
        if answer.status_code == 401 or answer.status_code < 400:
            # Re-authentication and redirects are the session's to do.
            return None
        # The error the session would raise, without sending the request
        # a second time (a failed write-free GET is still seen twice in a
        # server's log otherwise, and a 5xx is not retried by the session).
        error = ks_exc.from_response(answer, 'GET', answer.url)
        raise http_error_to_exception(error) from error

    def _resolved(self):
        """What every request needs, worked out once: False when the
        lean way does not apply to this session."""
        with self._lock:
            if self._target is None:
                try:
                    self._target = _lean_target(self.session,
                                                self.ks_filter) or False
                except Exception:  # the session path reports it
                    self._target = False
            return self._target

    def _send(self, target, path, headers):
        """The response, or None if neither a kept-alive connection nor
        a fresh one could send it."""
        import http.client
        for fresh in (False, True):
            connection, reused = self._connection(target, fresh)
            try:
                connection.request('GET', path, headers=headers)
                reply = connection.getresponse()
                body = reply.read()
            except (http.client.HTTPException, OSError, ValueError) as exc:
                connection.close()
                if reused and _stale_connection(exc):
                    continue
                return None
            if reply.will_close:
                connection.close()
            else:
                self._idle.append(connection)
            return _response(reply, body)
        return None

    def _connection(self, target, fresh):
        """``(connection, reused)``: an idle kept-alive one first."""
        if not fresh:
            try:
                return self._idle.pop(), True
            except IndexError:
                pass
        return target['connect'](), False


def _stale_connection(exc):
    """True for the ways a kept-alive connection the server closed while
    it was idle fails: worth one more try on a fresh connection (never a
    timeout, which the session's own try would only repeat)."""
    import http.client
    return isinstance(exc, (http.client.RemoteDisconnected,
                            ConnectionResetError, BrokenPipeError))


def _quoted(path):
    """The path as requests sends it (percent-encoded where needed)."""
    import requests.utils
    quoted = requests.utils.requote_uri(path)
    quoted.encode('ascii')  # UnicodeEncodeError is a ValueError
    return quoted


def _lean_target(session, ks_filter):
    import functools
    import http.client
    import urllib.parse

    endpoint = session.get_endpoint(**ks_filter)
    parts = urllib.parse.urlsplit(endpoint or '')
    if parts.scheme not in ('http', 'https') or not parts.hostname:
        return None
    requests_session = getattr(session, 'session', None)
    if not _plain_transport(requests_session, endpoint):
        return None
    if _environment_proxy(requests_session, endpoint):
        return None
    options = {'timeout': session.timeout}
    if parts.scheme == 'https':
        verify = _verify_as_requests(session, requests_session, endpoint)
        connect = functools.partial(
            http.client.HTTPSConnection,
            context=_tls_context(verify, session.cert), **options)
    else:
        connect = functools.partial(http.client.HTTPConnection, **options)
    headers = dict(getattr(session, 'additional_headers', None) or {})
    headers.setdefault('User-Agent', _user_agent(session))
    return {'base': '%s://%s' % (parts.scheme, parts.netloc),
            'prefix': parts.path.rstrip('/'),
            'connect': functools.partial(connect, parts.netloc),
            'headers': headers}


def _plain_transport(requests_session, endpoint):
    """True when requests would send to ``endpoint`` itself: no proxy of
    the session, no adapter mounted in place of requests' own (a retrying
    one, a test's fake transport)."""
    from keystoneauth1 import session as ks_session
    import requests
    if requests_session is None or requests_session.proxies:
        return False
    adapter = requests_session.get_adapter(endpoint)
    return type(adapter) in (requests.adapters.HTTPAdapter,
                             ks_session.TCPKeepAliveAdapter)


def _environment_proxy(requests_session, endpoint):
    """True when requests would reach ``endpoint`` through a proxy named
    in the environment (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY)."""
    import requests.utils
    if not requests_session.trust_env:
        return False
    proxies = requests.utils.get_environ_proxies(endpoint)
    return bool(requests.utils.select_proxy(endpoint, proxies))


def _verify_as_requests(session, requests_session, endpoint):
    """What requests would verify the server with: the session's setting,
    or where it says "verify", the CA bundle of the environment
    (REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE) or certifi's."""
    import requests.certs
    verify = requests_session.merge_environment_settings(
        endpoint, {}, None, session.verify, None)['verify']
    return requests.certs.where() if verify is True else verify


def _tls_context(verify, cert):
    import os
    import ssl
    if verify is False:
        context = ssl._create_unverified_context()
    elif isinstance(verify, str) and os.path.isdir(verify):
        context = ssl.create_default_context(capath=verify)
    elif isinstance(verify, str):
        context = ssl.create_default_context(cafile=verify)
    else:
        context = ssl.create_default_context()
    if cert:
        certfile, keyfile = (cert if isinstance(cert, (tuple, list))
                             else (cert, None))
        context.load_cert_chain(certfile, keyfile)
    return context


def _user_agent(session):
    if getattr(session, 'user_agent', None):
        return session.user_agent
    import keystoneauth1
    import requests
    name = getattr(session, 'app_name', None) or 'osc-placement'
    return '%s keystoneauth1/%s python-requests/%s' % (
        name, getattr(keystoneauth1, '__version__', ''), requests.__version__)


def _query(params):
    """``?a=1&b=2&b=3`` as requests encodes it (None dropped, lists
    repeated), or '' without parameters."""
    import urllib.parse
    if not params:
        return ''
    pairs = [(key, value) for key, value in params.items()
             if value is not None]
    text = urllib.parse.urlencode(pairs, doseq=True)
    return '?' + text if text else ''


def _response(reply, body):
    import requests
    from requests.structures import CaseInsensitiveDict
    response = requests.Response()
    response.status_code = reply.status
    response.reason = reply.reason
    response.headers = CaseInsensitiveDict(reply.getheaders())
    response._content = body
    response.encoding = 'utf-8'
    return response
