# SPDX-License-Identifier: Apache-2.0
"""The HTTP vocabulary the app and the handlers share: the Request and
Response types, the checks on a request's text, body, media types and
query (JSON schemas), and the cache headers of an answer.

Which checks a route makes before its handler, and its version gate, are
listed in routes.py."""

import email.utils

import jsonschema
import orjson
from oslo_utils import uuidutils
import webob

from osc_placement.server import errors
from osc_placement.server import schemas

JSON = 'application/json'

_BODY_FORMATS = jsonschema.FormatChecker()
_BODY_FORMATS.checks('uuid')(uuidutils.is_uuid_like)


class Request(webob.Request):
    """A WebOb request plus what the app learnt about it."""

    version = None
    context = None
    app = None
    url_vars = None

    def link(self, path):
        """A body link: relative, with the mount prefix."""
        return self.script_name + path

    def location(self, path):
        """A Location header value: absolute, with the mount prefix."""
        return self.application_url + path

    def json_body(self, schema, direct_check=None):
        """The body parsed and validated against ``schema``.

        ``direct_check``, when given, is a function of the parsed body
        that accepts only bodies ``schema`` accepts; a body it accepts
        skips jsonschema, any other is validated as always."""
        try:
            data = orjson.loads(self.body)
        except orjson.JSONDecodeError as exc:
            raise errors.BadRequest('Malformed JSON: %s' % exc)
        _check_json_text(data)
        if direct_check is None or not direct_check(data):
            validate(data, schema, 'JSON does not validate: %s')
        return data

    def query(self, schema):
        """The query string as a dict (last value wins), validated."""
        params = dict(self.GET)
        schemas.validate_query(params, schema)
        return params

    def authorize(self, name, target=None):
        self.app.authorize(self.context, name, target)

    @property
    def db(self):
        return self.app.db


# Bodies the schemas accept are a few levels deep (a reshaper body, the
# deepest, has six); deeper ones would only exhaust the validator's stack.
MAX_JSON_DEPTH = 32


def check_request_text(req):
    """Refuse a path or query that is not UTF-8 or holds a NUL, before
    any handler or database sees it (PostgreSQL cannot store a NUL; the
    others could, and then would answer differently).

    No resource has such a name, so a path is a 404 (as upstream); a
    query is a 400."""
    try:
        path = req.path_info
    except UnicodeDecodeError:
        raise not_found()
    if '\x00' in path:
        raise not_found()
    try:
        pairs = req.GET.items()
    except UnicodeDecodeError:
        raise errors.BadRequest(
            'Invalid query string parameters: not UTF-8 text')
    if any('\x00' in key or '\x00' in value for key, value in pairs):
        raise errors.BadRequest(
            'Invalid query string parameters: NUL character')


def _check_json_text(data):
    """400 for a body nested deeper than MAX_JSON_DEPTH or with a NUL in
    a key or string (see check_request_text); walked without recursion."""
    pending = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            raise errors.BadRequest(
                'JSON does not validate: nested deeper than %d levels'
                % MAX_JSON_DEPTH)
        if isinstance(value, dict):
            for key, item in value.items():
                if '\x00' in key:
                    raise _nul_in_json()
                pending.append((item, depth + 1))
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)
        elif isinstance(value, str) and '\x00' in value:
            raise _nul_in_json()


def _nul_in_json():
    return errors.BadRequest('JSON does not validate: NUL character in a '
                             'string')


def validate(data, schema, template):
    """A body (or one value of it) checked against ``schema``."""
    schemas.validate(data, schema, template, _BODY_FORMATS)


class Response:
    """What a handler returns: status, optional JSON body, headers, and
    ``held``: objects the answer was built from, to free only once it
    is sent (see app.SentBody)."""

    __slots__ = ('status', 'body', 'headers', 'vary', 'version_header',
                 'held', 'content_type')

    def __init__(self, status=200, body=None, headers=None,
                 content_type=None):
        self.status = status
        # Sent as JSON; bytes as they are when ``content_type`` is set.
        self.body = body
        self.content_type = content_type
        self.headers = headers or []
        self.vary = True
        self.version_header = True
        self.held = None


def http_date(when):
    return email.utils.format_datetime(
        when.replace(tzinfo=None), usegmt=False).replace('-0000', 'GMT')


def cached(req, resp, last_modified):
    """Add ``cache-control``/``last-modified`` from ``cache_headers`` on.

    ``last_modified`` is a datetime, or None to send only cache-control
    (upstream's gap for some empty responses)."""
    if req.version.supports('cache_headers'):
        resp.headers.append(('cache-control', 'no-cache'))
        if last_modified is not None:
            resp.headers.append(('last-modified', http_date(last_modified)))
    return resp


def check_json_body(req):
    """415 unless the body is JSON."""
    if req.content_type != JSON:
        raise errors.unsupported_media_type(req)


def check_accept_json(req):
    """406 unless the client accepts JSON."""
    accept = req.environ.get('HTTP_ACCEPT')
    # JSON itself, what nearly every client sends (and what a missing
    # Accept became), needs none of WebOb's parsing.
    if accept and accept != JSON and JSON not in req.accept:
        raise errors.NotAcceptable('Only application/json is provided')


def not_found(detail=''):
    err = errors.NotFound(detail)
    err.vary = False
    return err
