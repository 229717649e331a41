/** Typed domain errors: each carries a stable code that outer layers map to answers. */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class OrderNotFound extends DomainError {
  readonly code = 'ORDER_NOT_FOUND';
  constructor(readonly orderId: string) {
    super(`Order ${orderId} does not exist`);
  }
}

export class IllegalOrderTransition extends DomainError {
  readonly code = 'ILLEGAL_ORDER_STATE';
  constructor(
    readonly orderId: string,
    readonly status: string,
    readonly command: string,
  ) {
    super(`Order ${orderId} is ${status}: ${command} is not allowed`);
  }
}

export class OrderAlreadyExists extends DomainError {
  readonly code = 'ORDER_ALREADY_EXISTS';
  constructor(readonly orderId: string) {
    super(`Order ${orderId} was already reserved with other terms`);
  }
}

export class ProductNotListed extends DomainError {
  readonly code = 'PRODUCT_NOT_FOUND';
  constructor(readonly productId: number) {
    super(`Product ${productId} is not listed`);
  }
}

export class ProductAlreadyListed extends DomainError {
  readonly code = 'PRODUCT_ALREADY_LISTED';
  constructor(readonly productId: number) {
    super(`Product ${productId} is already listed`);
  }
}

export class InvalidProductTerms extends DomainError {
  readonly code = 'INVALID_PRODUCT';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export class InvalidOrderQuantity extends DomainError {
  readonly code = 'INVALID_QUANTITY';
  constructor(readonly quantity: number) {
    super(`quantity must be a whole number ≥ 1, got ${quantity}`);
  }
}
