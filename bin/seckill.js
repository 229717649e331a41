#!/usr/bin/env node
import '../dist/src/infrastructure/main.js';
