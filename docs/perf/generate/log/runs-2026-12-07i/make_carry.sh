#!/bin/bash
# The carry of call1.sh (h17), now made by the shared script.
exec bash bench/make_device_carry.sh h17
