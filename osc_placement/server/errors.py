# SPDX-License-Identifier: Apache-2.0
"""Typed errors raised anywhere in the server and rendered by the app.

Handlers and objects raise these; the application turns them into the
``{"errors": [...]}`` body with upstream's status, title and code, or into
WebOb's HTML page or plain text when the client does not accept JSON. The
codes are upstream's ``placement.*`` strings (shown from 1.23 on).
"""

import webob.acceptparse
import webob.exc
import webob.util

JSON_TYPE = 'application/json'
HTML_TYPE = 'text/html; charset=UTF-8'
DEFAULT = 'placement.undefined_code'
INVENTORY_INUSE = 'placement.inventory.inuse'
CONCURRENT_UPDATE = 'placement.concurrent_update'
DUPLICATE_NAME = 'placement.duplicate_name'
PROVIDER_INUSE = 'placement.resource_provider.inuse'
PROVIDER_CANNOT_DELETE_PARENT = (
    'placement.resource_provider.cannot_delete_parent')
PROVIDER_NOT_FOUND = 'placement.resource_provider.not_found'
QUERYPARAM_DUPLICATE_KEY = 'placement.query.duplicate_key'
QUERYPARAM_BAD_VALUE = 'placement.query.bad_value'
QUERYPARAM_MISSING_VALUE = 'placement.query.missing_value'


# Upstream raises WebOb exceptions and WebOb renders them: the body
# template of the status (WebOb's explanation, or for 405, 406 and 415 a
# line naming the request's method, Accept or Content-Type), then a JSON
# document, an HTML page or plain text, whichever the client's Accept
# prefers (RequestLog makes a missing or ``*/*`` Accept JSON).
_OFFERS = ('text/html', JSON_TYPE)
_HTML_PAGE = webob.exc.WSGIHTTPException.html_template_obj
_PLAIN_PAGE = webob.exc.WSGIHTTPException.plain_template_obj
_TEMPLATE_KEYS = ('REQUEST_METHOD', 'HTTP_ACCEPT', 'CONTENT_TYPE')


def representation(environ):
    """``text/html``, ``application/json`` or None (plain text): what WebOb
    renders an error as for the request's Accept header."""
    accept = webob.acceptparse.create_accept_header(
        environ.get('HTTP_ACCEPT', ''))
    offers = accept.acceptable_offers(_OFFERS)
    return offers[0][0] if offers else None


class PlacementError(Exception):
    """An HTTP error with upstream's status, title, detail and code."""

    status = 500
    title = 'Internal Server Error'
    # Raised errors (policy, not found) carry no ``vary`` header upstream.
    vary = True

    def __init__(self, detail, code=DEFAULT, headers=None):
        super().__init__(detail)
        self.detail = detail
        self.code = code
        self.headers = headers or {}
        self.extra = {}

    def webob_body(self, environ, escape=webob.exc.no_escape):
        """The text WebOb's body template makes of this error, tags and
        all, its parts escaped with ``escape``."""
        exc_class = webob.exc.status_map[self.status]
        args = {'explanation': escape(exc_class.explanation),
                'detail': escape(self.detail or ''), 'html_comment': ''}
        args.update((key, escape(environ[key])) for key in _TEMPLATE_KEYS
                    if key in environ)
        return exc_class.body_template_obj.safe_substitute(args)

    def full_detail(self, environ):
        """The JSON body's detail: WebOb's text without tags, as upstream's."""
        return webob.exc.strip_tags(self.webob_body(environ))

    def as_dict(self, environ, request_id, with_code):
        error = {'status': self.status, 'title': self.title,
                 'detail': self.full_detail(environ)}
        if with_code:
            error['code'] = self.code
        error['request_id'] = request_id
        error.update(self.extra)
        return {'errors': [error]}

    def as_page(self, environ, html):
        """(content type, bytes) of WebOb's HTML page or plain text."""
        status = '%d %s' % (self.status, self.title)
        if html:
            text = _HTML_PAGE.substitute(status=status, body=self.webob_body(
                environ, webob.util.html_escape))
            return HTML_TYPE, text.encode()
        text = _PLAIN_PAGE.substitute(status=status, title=self.title,
                                      body=self.full_detail(environ))
        return 'text/plain; charset=UTF-8', text.encode()


class BadRequest(PlacementError):
    status = 400
    title = 'Bad Request'


class Forbidden(PlacementError):
    status = 403
    title = 'Forbidden'


class NotFound(PlacementError):
    status = 404
    title = 'Not Found'


class MethodNotAllowed(PlacementError):
    status = 405
    title = 'Method Not Allowed'


class NotAcceptable(PlacementError):
    status = 406
    title = 'Not Acceptable'


class Unauthorized(PlacementError):
    status = 401
    title = 'Unauthorized'


class Conflict(PlacementError):
    status = 409
    title = 'Conflict'


class UnsupportedMediaType(PlacementError):
    status = 415
    title = 'Unsupported Media Type'


class InternalServerError(PlacementError):
    status = 500
    title = 'Internal Server Error'


class ServiceUnavailable(PlacementError):
    status = 503
    title = 'Service Unavailable'


def database_unavailable(retry_after):
    """503 for a request that met a database it could not use (down,
    restarting, failing over): the client may send it again after
    ``retry_after`` seconds. Upstream answers these 500."""
    err = ServiceUnavailable(
        'The placement database is unavailable (unreachable, restarting '
        'or failing over). Retry the request later.',
        headers={'Retry-After': str(retry_after)})
    # Answered where upstream's fault wrapper answers its 500: no vary.
    err.vary = False
    return err


def method_not_allowed(method, allowed):
    # WebOb's 405 template names the method (REQUEST_METHOD).
    return MethodNotAllowed(
        'The method specified is not allowed for this resource.',
        headers={'Allow': ', '.join(allowed)})


def unsupported_media_type(req):
    """415; WebOb's template names the request's media type, which upstream
    sets to 'None' when there is none."""
    if not req.content_type:
        req.content_type = 'None'
    return UnsupportedMediaType(
        'The media type %s is not supported, use application/json'
        % req.content_type)
