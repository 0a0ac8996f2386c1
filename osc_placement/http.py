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
        """Use at most ``ceiling`` when the version is negotiated.

        An explicitly requested version is never changed.
        """
        self._ceiling = ceiling

    def request(self, method, url, **kwargs):
        """Send a request at the client's microversion; return the response.

        ``version`` overrides the microversion for this one call.
        """
        microversion = kwargs.pop('version', None) or self.api_version
        return self._send(method, url, microversion, **kwargs)

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
    """True when a debug record of keystoneauth1's request and response
    log would reach a handler (``--debug``, a debug log file).

    keystoneauth1 builds that record whenever its logger is enabled for
    debug, and the shells enable every logger (the root logger is at
    DEBUG) and filter at their handlers. Building it is not free: a JSON
    body is parsed and serialised again to hide service catalogues, about
    0.1 s of CPU for 13,500 providers, for a record no handler prints. So
    the log is asked for only when some handler would print it.
    """
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
    """`` (Request-ID: req-...)``: the id the server gave the failed
    request in ``x-openstack-request-id`` (both Placements send it;
    keystoneauth1 reads it), or '' when there was none."""
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
