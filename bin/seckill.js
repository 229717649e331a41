#!/usr/bin/env -S node --max-semi-space-size=16 --max-old-space-size=384
import '../dist/src/infrastructure/main.js';
