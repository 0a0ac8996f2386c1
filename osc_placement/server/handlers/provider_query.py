"""Parsing of GET /resource_providers filters (resources, required,
member_of) into plain values, per microversion, with upstream's 400 texts.

Pure parsing: no database. ``objects.resource_provider.list_providers``
applies the result. (Kept separate so the shared request-group parser can
replace it.)
"""

from oslo_utils import uuidutils

from osc_placement.server import errors

_RESOURCES_FORM = ('Badly formed resources parameter. Expected resources '
                   'query string parameter in form: '
                   '?resources=VCPU:2,MEMORY_MB:1024. Got: %s.')


def parse_resources(value):
    """``RC:N,RC:N`` -> {class name: amount}."""
    if not value or not value.strip():
        raise errors.BadRequest(_RESOURCES_FORM % 'empty string')
    resources = {}
    for item in value.split(','):
        try:
            name, amount = item.split(':')
        except ValueError:
            raise errors.BadRequest(_RESOURCES_FORM % item)
        name = name.strip()
        try:
            amount = int(amount)
        except ValueError:
            raise errors.BadRequest(
                'Requested resource %s expected positive integer amount. '
                'Got: %s.' % (name, amount))
        if amount < 1:
            raise errors.BadRequest(
                'Requested resource %s requires amount >= 1. Got: %d.'
                % (name, amount))
        resources[name] = amount
    return resources


def _required_form(version):
    example = ('HW_CPU_X86_VMX,!CUSTOM_MAGIC' if version >= (1, 22)
               else 'HW_CPU_X86_VMX,CUSTOM_MAGIC')
    return ("Invalid query string parameters: Expected 'required' "
            "parameter value of the form: %s." % example)


def _parse_any_of(value, version):
    if version < (1, 39):
        raise errors.BadRequest(
            "Invalid query string parameters: The format "
            "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since "
            "microversion 1.39. Got: %s" % value)
    names = [n.strip() for n in value[3:].split(',')]
    if any(not n for n in names):
        raise errors.BadRequest('%s Got an empty trait in: %s'
                                % (_required_form(version), value))
    if any(n.startswith('!') for n in names):
        raise errors.BadRequest(
            "Invalid query string parameters: The format 'in:' does not "
            "support forbidden traits. Got: %s" % value)
    return set(names)


def _parse_required_value(value, version, required, forbidden):
    if value.startswith('in:'):
        required.append(_parse_any_of(value, version))
        return
    for name in (n.strip() for n in value.split(',')):
        if not name:
            raise errors.BadRequest('%s Got an empty trait in: %s'
                                    % (_required_form(version), value))
        if name.startswith('!'):
            if version < (1, 22):
                raise errors.BadRequest('%s Got: %s'
                                        % (_required_form(version), value))
            forbidden.add(name.lstrip('!'))
        else:
            required.append({name})


def parse_required(values, version):
    """``required`` values -> ([any-of name sets], {forbidden names}).

    Below 1.39 only the last value counts; from 1.39 all are ANDed."""
    if version < (1, 39):
        values = values[-1:]
    required, forbidden = [], set()
    for value in values:
        _parse_required_value(value, version, required, forbidden)
    return required, forbidden


def _uuids(values, raw):
    for value in values:
        if not uuidutils.is_uuid_like(value):
            raise errors.BadRequest(
                "Invalid query string parameters: Expected 'member_of' "
                "parameter to contain valid UUID(s). Got: %s" % value)
    return set(values)


def _parse_member_of_value(value, version):
    """One value -> (is_forbidden, set of aggregate uuids)."""
    forbidden = value.startswith('!')
    if forbidden and version < (1, 32):
        raise errors.BadRequest('Forbidden member_of parameters are not '
                                'supported in the specified microversion')
    body = value[1:] if forbidden else value
    if body.startswith('in:'):
        return forbidden, _uuids(body[3:].split(','), value)
    if ',' in body:
        raise errors.BadRequest(
            "Multiple values for 'member_of' must be prefixed with the "
            "'in:' or '!in:' keyword using the valid microversion. Got: %s"
            % value)
    return forbidden, _uuids([body], value)


def parse_member_of(values, version):
    """-> ([any-of uuid sets], {forbidden uuids})."""
    if len(values) > 1 and version < (1, 24):
        raise errors.BadRequest(
            'Multiple member_of parameters are not supported')
    any_of, forbidden = [], set()
    for value in values:
        is_forbidden, uuids = _parse_member_of_value(value, version)
        if is_forbidden:
            forbidden |= uuids
        else:
            any_of.append(uuids)
    return any_of, forbidden
