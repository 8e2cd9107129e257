export * from './errors.js';
export * from './driver.js';
