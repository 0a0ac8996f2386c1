# SPDX-License-Identifier: Apache-2.0
"""``placement``: the placement commands without the ``openstack`` shell.

``openstack`` spends most of a short command's time importing
openstackclient and openstacksdk, which a placement command never uses.
This shell runs the same command classes, loaded from the same
``openstack.placement.v1`` entry point group, with the same global options
for talking to Placement, and builds the client with the plugin's own
``make_client``. It imports cliff and the keystoneauth1 session only; the
keystoneauth1 plugin loaders are imported for password-style auth, and
openstacksdk's config module only when ``--os-cloud``/``OS_CLOUD`` asks
for ``clouds.yaml``.
"""

import argparse
import logging
import os
import sys

from cliff import app
from cliff import commandmanager
from cliff import complete
from cliff import help as cliff_help

from osc_placement import library_seams
from osc_placement import plugin

COMMAND_GROUP = 'openstack.placement.v1'
DEFAULT_INTERFACE = 'public'
DEFAULT_DOMAIN = 'default'

# Auth types served without keystoneauth1's plugin loaders: a token used as
# is against a given endpoint, or no auth at all. 'token_endpoint' is the
# older name openstackclient still accepts for 'admin_token'.
TOKEN_ENDPOINT_AUTH = ('admin_token', 'token_endpoint')
NO_AUTH = 'none'
# Password auth types that get --os-default-domain for a missing user or
# project domain, as osc-lib does for Identity v3.
DEFAULT_DOMAIN_AUTH = ('password', 'v3password', 'v3totp')

# Auth types whose options are all in AUTH_OPTIONS below.
LISTED_AUTH = TOKEN_ENDPOINT_AUTH + (
    NO_AUTH, 'password', 'v3password', 'token', 'v3token',
    'v3applicationcredential')

# The keystoneauth1 options scripts pass to ``openstack`` for the auth types
# we document (admin_token, none, password, v3password, token, v3token,
# v3applicationcredential). Each is --os-NAME, env OS_NAME, dest NAME, as
# osc-lib registers them. Options of other auth types are added once the
# type is known (see PlacementShell._add_plugin_options).
AUTH_OPTIONS = (
    ('auth-url', 'Authentication URL'),
    ('endpoint', 'Placement endpoint, for admin_token and none'),
    ('token', 'Token, for admin_token and token'),
    ('username', 'Username'),
    ('user-id', 'User ID'),
    ('password', "User's password"),
    ('user-domain-name', "User's domain name"),
    ('user-domain-id', "User's domain ID"),
    ('project-name', 'Project name to scope to'),
    ('project-id', 'Project ID to scope to'),
    ('project-domain-name', "Project's domain name"),
    ('project-domain-id', "Project's domain ID"),
    ('domain-name', 'Domain name to scope to'),
    ('domain-id', 'Domain ID to scope to'),
    ('system-scope', 'System scope, e.g. all'),
    ('trust-id', 'Trust ID'),
    ('default-domain-name', 'Default domain name for user and project'),
    ('default-domain-id', 'Default domain ID for user and project'),
    ('application-credential-id', 'Application credential ID'),
    ('application-credential-name', 'Application credential name'),
    ('application-credential-secret', 'Application credential secret'),
)
# Old tenant variables still honoured by openstackclient.
_ENV_FALLBACK = {'OS_PROJECT_NAME': 'OS_TENANT_NAME',
                 'OS_PROJECT_ID': 'OS_TENANT_ID'}


def env(name, default=None):
    """An environment variable, or its old tenant twin, or ``default``."""
    value = os.environ.get(name)
    if value:
        return value
    fallback = _ENV_FALLBACK.get(name)
    if fallback and os.environ.get(fallback):
        return os.environ[fallback]
    return default


def auth_option_env(name):
    return 'OS_' + name.upper().replace('-', '_')


def resolve_auth_type(options):
    """The auth type, chosen as openstackclient chooses it.

    Explicit --os-auth-type/OS_AUTH_TYPE wins; else a token and an endpoint
    mean admin_token; else password.
    """
    if options.auth_type:
        return options.auth_type
    if options.token and options.endpoint:
        return 'admin_token'
    return 'password'


def auth_type_from_argv(argv):
    """--os-auth-type from ``argv`` or the environment, before parsing.

    Needed to register the options of an auth type this module does not
    list before the real parse.
    """
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument('--os-auth-type', dest='auth_type',
                     default=env('OS_AUTH_TYPE'))
    known, _ = pre.parse_known_args(argv)
    return known.auth_type


class ClientManager:
    """What placement commands use of osc-lib's ClientManager.

    ``session`` stays None until a command that needs auth runs (``help``
    does not), which is how ``version.get_version`` knows no request may be
    sent. ``placement`` is built on first use by the plugin's own
    ``make_client``, so negotiation and version validation are the
    plugin's.
    """

    def __init__(self, api_version, region_name=None,
                 interface=DEFAULT_INTERFACE):
        self._api_version = api_version
        self.region_name = region_name
        self.interface = interface
        self.session = None
        self.configuration = {}
        self._placement = None

    def get_configuration(self):
        """clouds.yaml settings of --os-cloud, as in osc-lib's, or {}."""
        return dict(self.configuration)

    @property
    def placement(self):
        if self._placement is None:
            self._placement = plugin.make_client(self)
        return self._placement


class PlacementShell(app.App):
    """Command-line interface to the Placement API"""

    # The same name in usage lines, errors and --version, whatever the
    # file that started us is called (cliff takes it from sys.argv[0]).
    NAME = 'placement'
    LOG = logging.getLogger(NAME)

    def __init__(self, stdin=None, stdout=None, stderr=None):
        self._extra_auth_type = None
        super().__init__(
            description=__doc__.splitlines()[0].strip('`'),
            version=_package_version(),
            command_manager=commandmanager.CommandManager(COMMAND_GROUP),
            stdin=stdin, stdout=stdout, stderr=stderr,
            deferred_help=True)
        self.api_version = {}
        self.client_manager = None
        self.cloud = None

    # --- options ---------------------------------------------------------

    def build_option_parser(self, description, version,
                            argparse_kwargs=None):
        parser = super().build_option_parser(description, version,
                                             argparse_kwargs)
        parser.prog = 'placement'
        library_seams.set_version_text(parser, 'placement %s' % version)
        parser.add_argument(
            '--os-cloud', metavar='<cloud-config-name>', dest='cloud',
            default=env('OS_CLOUD'),
            help='Cloud name in clouds.yaml; only then is clouds.yaml read '
                 '(Env: OS_CLOUD)')
        parser.add_argument(
            '--os-region-name', metavar='<auth-region-name>',
            dest='region_name', default=env('OS_REGION_NAME'),
            help='Authentication region name (Env: OS_REGION_NAME)')
        parser.add_argument(
            '--os-interface', metavar='<interface>', dest='interface',
            choices=['admin', 'public', 'internal'],
            default=env('OS_INTERFACE'),
            help='Select an interface type. Valid interface types: '
                 '[admin, public, internal]. default=%s, (Env: '
                 'OS_INTERFACE)' % DEFAULT_INTERFACE)
        parser.add_argument(
            '--os-cacert', metavar='<ca-bundle-file>', dest='cacert',
            default=env('OS_CACERT'),
            help='CA certificate bundle file (Env: OS_CACERT)')
        parser.add_argument(
            '--os-cert', metavar='<certificate-file>', dest='cert',
            default=env('OS_CERT'),
            help='Client certificate bundle file (Env: OS_CERT)')
        parser.add_argument(
            '--os-key', metavar='<key-file>', dest='key',
            default=env('OS_KEY'),
            help='Client certificate key file (Env: OS_KEY)')
        verify = parser.add_mutually_exclusive_group()
        verify.add_argument(
            '--verify', action='store_true', default=None,
            help='Verify server certificate (default)')
        verify.add_argument(
            '--insecure', action='store_true', default=None,
            help='Disable server certificate verification')
        parser.add_argument(
            '--os-default-domain', metavar='<auth-domain>',
            dest='default_domain',
            default=env('OS_DEFAULT_DOMAIN', DEFAULT_DOMAIN),
            help='Default domain ID, default=%s. (Env: OS_DEFAULT_DOMAIN)'
                 % DEFAULT_DOMAIN)
        parser.add_argument(
            '--os-identity-api-version', metavar='<identity-api-version>',
            dest='identity_api_version',
            default=env('OS_IDENTITY_API_VERSION', '3'),
            help='Identity API version, default=3 '
                 '(Env: OS_IDENTITY_API_VERSION)')
        parser.add_argument(
            '--os-auth-type', metavar='<auth-type>', dest='auth_type',
            default=env('OS_AUTH_TYPE'),
            help='Select an authentication type, e.g. admin_token, none, '
                 'password, v3password, token, v3applicationcredential. '
                 'Default: admin_token with --os-token and --os-endpoint, '
                 'else password (Env: OS_AUTH_TYPE)')
        for name, text in AUTH_OPTIONS:
            self._add_auth_option(parser, name, text)
        parser.add_argument('--os-tenant-name', dest='project_name',
                            help=argparse.SUPPRESS)
        parser.add_argument('--os-tenant-id', dest='project_id',
                            help=argparse.SUPPRESS)
        plugin.build_option_parser(parser)
        return parser

    @staticmethod
    def _add_auth_option(parser, name, text):
        variable = auth_option_env(name)
        parser.add_argument(
            '--os-' + name, metavar='<auth-%s>' % name,
            dest=name.replace('-', '_'), default=env(variable),
            help='%s (Env: %s)' % (text, variable))

    def _add_plugin_options(self, auth_type):
        """Register the options of an auth type AUTH_OPTIONS lacks."""
        from keystoneauth1 import loading
        known = {name for name, _ in AUTH_OPTIONS}
        try:
            loader = loading.get_plugin_loader(auth_type)
        except Exception:  # unknown type: reported when auth is built
            return
        for opt in loader.get_options():
            name = opt.name.replace('_', '-')
            if name not in known:
                self._add_auth_option(self.parser, name, opt.help or name)

    def run(self, argv):
        auth_type = auth_type_from_argv(argv)
        if auth_type and auth_type not in LISTED_AUTH:
            self._add_plugin_options(auth_type)
        return super().run(argv)

    # --- logging, as osc-lib does it --------------------------------------

    def configure_logging(self):
        """Warnings and errors on stderr; -v adds info, --debug all.

        cliff's default shows info at the default verbosity; openstack
        shows only warnings, so do we.
        """
        if self.options.debug:
            self.options.verbose_level = 3
        level = {0: logging.ERROR, 1: logging.WARNING,
                 2: logging.INFO}.get(self.options.verbose_level,
                                      logging.DEBUG)
        root = logging.getLogger('')
        root.setLevel(logging.DEBUG)
        console = logging.StreamHandler(sys.stderr)
        console.setLevel(level)
        console.setFormatter(logging.Formatter('%(message)s'))
        root.addHandler(console)
        if self.options.log_file:
            handler = logging.FileHandler(self.options.log_file)
            handler.setLevel(level)
            handler.setFormatter(logging.Formatter(
                self.LOG_FILE_MESSAGE_FORMAT))
            root.addHandler(handler)
        quiet = logging.DEBUG if self.options.debug else logging.ERROR
        logging.getLogger('requests').setLevel(quiet)
        for name in ('cliff', 'stevedore', 'iso8601'):
            logging.getLogger(name).setLevel(logging.ERROR)

    # --- start-up and auth ------------------------------------------------

    def initialize_app(self, argv):
        requested = self.options.os_placement_api_version
        # Raises CommandError with the plugin's text for a bad version.
        plugin.check_api_version(requested)
        self.api_version = {plugin.API_NAME: requested}
        self.client_manager = ClientManager(
            self.api_version, region_name=self.options.region_name,
            interface=self.options.interface or DEFAULT_INTERFACE)

    def prepare_to_run_command(self, cmd):
        if not needs_auth(cmd):
            return
        if self.options.cloud:
            self._use_cloud_config()
        else:
            self.client_manager.session = build_session(self.options)
        authenticate(self.client_manager.session)

    def _use_cloud_config(self):
        """Session, region and interface from clouds.yaml; the command
        line and OS_* variables override it, as with openstack."""
        from openstack import config as os_config

        self.cloud = os_config.OpenStackConfig(
            override_defaults={'interface': DEFAULT_INTERFACE},
        ).get_one(cloud=self.options.cloud, argparse=self.options,
                  validate=True)
        manager = self.client_manager
        manager.session = self.cloud.get_session()
        manager.configuration = dict(self.cloud.config)
        manager.region_name = self.cloud.region_name or None
        manager.interface = (self.cloud.get_interface(plugin.SERVICE_TYPE)
                             or DEFAULT_INTERFACE)

    def clean_up(self, cmd, result, err):
        manager = self.client_manager
        if manager is not None and manager.session is not None:
            manager.session.session.close()


def needs_auth(cmd):
    """help and complete never talk to Placement."""
    if isinstance(cmd, (cliff_help.HelpCommand, complete.CompleteCommand)):
        return False
    return getattr(cmd, 'auth_required', True)


def build_session(options):
    """A keystoneauth1 session for the parsed global options."""
    from keystoneauth1 import session

    return session.Session(auth=build_auth(options),
                           verify=verify_setting(options),
                           cert=cert_setting(options),
                           user_agent='placement osc-placement/%s'
                           % _package_version())


def authenticate(session):
    """Get the token first, so a failing Identity service is reported as
    such and not as a failed Placement request."""
    # Identity plugins get their token from an Identity service; asked by
    # duck type, since importing keystoneauth1.identity to check costs
    # token/endpoint runs more than the check.
    if hasattr(session.auth, 'get_access'):
        session.get_token()


def verify_setting(options):
    """--insecure turns verification off; --os-cacert names the bundle."""
    if options.insecure:
        return False
    return options.cacert or True


def cert_setting(options):
    if options.cert and options.key:
        return (options.cert, options.key)
    return options.cert


def build_auth(options):
    """The keystoneauth1 auth plugin the options describe."""
    auth_type = resolve_auth_type(options)
    if auth_type in TOKEN_ENDPOINT_AUTH:
        _require(options, auth_type, ('token', 'endpoint'))
        from keystoneauth1 import token_endpoint
        return token_endpoint.Token(options.endpoint, options.token)
    if auth_type == NO_AUTH:
        _require(options, auth_type, ('endpoint',))
        from keystoneauth1 import noauth
        return noauth.NoAuth(endpoint=options.endpoint)
    return _loaded_auth(options, auth_type)


def _require(options, auth_type, names):
    missing = ['Set %s with --os-%s or %s' % (
        _with_article(name), name, auth_option_env(name))
        for name in names if not getattr(options, name, None)]
    if missing:
        _fail('Missing parameter(s) for auth type %s: \n%s'
              % (auth_type, '\n'.join(missing)))


def _with_article(word):
    return ('an %s' if word[0] in 'aeiou' else 'a %s') % word


def _loaded_auth(options, auth_type):
    """Password, token, application credential... via keystoneauth1's
    loaders, checked in openstackclient's order and with its texts:
    required options, then a password prompt, then osc-lib's checks."""
    from keystoneauth1 import exceptions as ks_exc
    from keystoneauth1 import loading

    try:
        loader = loading.get_plugin_loader(auth_type)
    except ks_exc.NoMatchingPlugin:
        _fail('Unknown auth type %s' % auth_type)
    plugin_options = loader.get_options()
    given = {opt.dest: getattr(options, opt.dest, None)
             for opt in plugin_options}
    given = {key: value for key, value in given.items() if value}
    apply_default_domain(given, auth_type, options)
    missing = ['Missing value %s required for auth plugin %s'
               % (opt.name, auth_type)
               for opt in plugin_options
               if opt.required and not given.get(opt.dest)]
    if missing:
        _fail('\n'.join(missing))
    for opt in plugin_options:
        if getattr(opt, 'prompt', None) and opt.dest not in given:
            given[opt.dest] = prompt_for_secret(opt.prompt)
    check_identity_options(given, {opt.dest for opt in plugin_options},
                           auth_type)
    return loader.load_from_options(**given)


# What openstack asks for when a plugin takes an option and it is missing,
# in its words (osc-lib's checks; osc_lib.api.auth itself is not imported,
# as it pulls in openstacksdk).
_IDENTITY_HINTS = (
    ('password', ('username', 'user_id'),
     'Set a username with --os-username, OS_USERNAME, or auth.username or '
     'set a user-id with --os-user-id, OS_USER_ID, or auth.user_id'),
    ('auth_url', ('auth_url',),
     'Set an authentication URL, with --os-auth-url, OS_AUTH_URL or '
     'auth.auth_url'),
    ('url', ('url',), 'Set a service URL, with --os-url, OS_URL or auth.url'),
    ('token', ('token',),
     'Set a token with --os-token, OS_TOKEN or auth.token'),
)


def check_identity_options(given, plugin_dests, auth_type):
    """Fail with openstack's hints when identity options are missing."""
    if not given and auth_type != NO_AUTH:
        hints = ['Set a cloud-name with --os-cloud or OS_CLOUD']
    else:
        hints = [hint for option, any_of, hint in _IDENTITY_HINTS
                 if option in plugin_dests
                 and not any(given.get(name) for name in any_of)]
    if hints:
        _fail('Missing parameter(s): \n%s' % '\n'.join(hints))


def prompt_for_secret(prompt):
    """Ask on a terminal, as openstack does; fail without one."""
    secret = None
    if hasattr(sys.stdin, 'isatty') and sys.stdin.isatty():
        import getpass
        try:
            secret = getpass.getpass(prompt or 'Password: ')
        except EOFError:
            pass
    if not secret:
        _fail('No password entered, or found via --os-password or '
              'OS_PASSWORD')
    return secret


def apply_default_domain(given, auth_type, options):
    """--os-default-domain for a missing user or project domain (v3)."""
    if (not str(options.identity_api_version).startswith('3')
            or auth_type not in DEFAULT_DOMAIN_AUTH
            or not options.default_domain):
        return
    for kind in ('project', 'user'):
        if not (given.get('%s_domain_id' % kind)
                or given.get('%s_domain_name' % kind)):
            given['%s_domain_id' % kind] = options.default_domain


def _fail(message):
    from osc_lib import exceptions
    raise exceptions.CommandError(message)


def _package_version():
    from importlib import metadata
    try:
        return metadata.version('osc-placement')
    except metadata.PackageNotFoundError:
        return 'unknown'


def skip_distribution_scan():
    """Spare cliff its scan of installed distributions: every command here
    is osc-placement's, so its "provided by" line never shows."""
    library_seams.name_distribution_up_front('osc_placement',
                                             'osc-placement')


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    skip_distribution_scan()
    return PlacementShell().run(argv)


if __name__ == '__main__':
    sys.exit(main())
