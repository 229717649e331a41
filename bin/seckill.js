#!/usr/bin/env -S node --max-semi-space-size=64
import '../dist/src/infrastructure/main.js';
