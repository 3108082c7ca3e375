"""Host worlds behind one :class:`~core.envs.base.HostWorld` protocol."""
