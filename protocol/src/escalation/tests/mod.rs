mod request;
mod result;
