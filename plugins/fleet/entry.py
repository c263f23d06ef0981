"""The module ``lifelong fleet worker`` hands to the Dramatiq worker CLI: it builds the broker
and the actor from the LIFELONG_FLEET_* environment (and pins the clock to LIFELONG_NOW when set,
for tests and evals)."""

from __future__ import annotations

import os

import dramatiq

from lifelong import clock

from .tasks import FleetSettings, declare_actor, make_broker

if os.environ.get("LIFELONG_NOW"):
    clock.set_now(clock.parse_instant(os.environ["LIFELONG_NOW"]))

settings = FleetSettings.from_env()
broker = make_broker(settings)
dramatiq.set_broker(broker)
actor = declare_actor(broker, settings)
