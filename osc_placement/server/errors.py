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


class PlacementError(Exception):
    """An HTTP error with upstream's status, title, detail and code."""

    status = 500
    title = 'Internal Server Error'

    def __init__(self, detail, code=DEFAULT, headers=None):
        super().__init__(detail)
        self.detail = detail
        self.code = code
        self.headers = headers or {}


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
