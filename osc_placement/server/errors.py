"""Typed errors raised anywhere in the server and rendered by the app.

Handlers and objects raise these; the application turns them into the
``{"errors": [...]}`` body with upstream's status, title and code. The codes
are upstream's ``placement.*`` strings (shown to clients from 1.23 on).
"""

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


# WebOb's status explanations, which upstream puts before each message.
_EXPLANATIONS = {
    400: ('The server could not comply with the request since it is either '
          'malformed or otherwise incorrect.'),
    403: 'Access was denied to this resource.',
    404: 'The resource could not be found.',
    409: 'There was a conflict when trying to complete your request.',
}


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
        # False renders ``detail`` alone, without WebOb's explanation.
        self.explained = True

    def full_detail(self):
        """The detail text as WebOb renders it: explanation, then message."""
        explanation = _EXPLANATIONS.get(self.status)
        if explanation is None or not self.explained:
            return str(self.detail)
        message = str(self.detail).replace('\n', ' ')
        return '%s\n\n %s  ' % (explanation, message)

    def as_dict(self, request_id, with_code):
        error = {'status': self.status, 'title': self.title,
                 'detail': self.full_detail()}
        if with_code:
            error['code'] = self.code
        error['request_id'] = request_id
        error.update(self.extra)
        return {'errors': [error]}


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


class Conflict(PlacementError):
    status = 409
    title = 'Conflict'


class UnsupportedMediaType(PlacementError):
    status = 415
    title = 'Unsupported Media Type'


class InternalServerError(PlacementError):
    status = 500
    title = 'Internal Server Error'


def method_not_allowed(method, allowed):
    return MethodNotAllowed(
        'The method %s is not allowed for this resource. \n\n The method '
        'specified is not allowed for this resource.' % method,
        headers={'Allow': ', '.join(allowed)})


def unsupported_media_type(content_type):
    return UnsupportedMediaType(
        'The request media type %s is not supported by this server. \n\n '
        'The media type %s is not supported, use application/json'
        % (content_type, content_type))
